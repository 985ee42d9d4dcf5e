// What the statement hooks tell exact timing, and the few bits of timing's
// state they test inline. Exact timing (src/pg/timing) registers its
// StatementTimer at preload; the hooks never include timing's headers, so
// the include arrows run one way: timing -> statements -> shared state.
#pragma once

#include <cstdint>

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// The boundaries of a timed statement, as the hooks see them. Every call is
// cheap when timing is off or no statement is open (each tests for itself,
// as noted); the hooks test timing_flags.open first where they need to.
struct StatementTimer {
    // pg_stat_waits.timing (the GUC's own variable: the one copy).
    const bool *enabled;
    // A top-level statement of queryid starts (not timed if timing is off
    // or queryid is 0) / ends, its commit included (a no-op if none is open).
    void (*start)(uint64_t queryid);
    void (*end)();
    // The same end, seen only once a later statement's message had replaced
    // the text in debug_query_string and the status entry: a slow run is
    // kept without text rather than with the other statement's.
    void (*end_late)();
    // From now on the open statement's time belongs to queryid (a nested
    // statement under track = all, or the parent again; 0 = the top-level
    // statement). Assumes an open statement.
    void (*attribute)(uint64_t queryid);
    // One execution of queryid finished (the per-query CPU row's calls).
    // Assumes an open statement.
    void (*count_call)(uint64_t queryid);
    // An execution of queryid ended at top level (timed server mode): one
    // call for it; true when it was the open statement's own (or queryid is 0).
    bool (*top_call)(uint64_t queryid);
    // The id the open statement is timed under (0 when none is open).
    uint64_t (*statement_id)();
    // An execution ended with no portal running (its portal dropped after
    // the run): one call if it was the open statement's own id, or the id
    // of the statement started before it (a portal dropped at the next
    // statement's Bind), or, with none open, the last statement's; anything
    // else ran nested and counts nothing. True when it was the open
    // statement's own.
    bool (*dropped_portal_call)(uint64_t queryid);
    // Writes the LOG line of a slow run kept with timing_flags.log_pending
    // (where logging is safe: a hook runs).
    void (*write_log)();
};

// Exact timing's flags, written only by timing and tested inline by the
// hooks and the wrappers. open: a top-level statement is being timed.
// log_pending: a slow run's LOG line is still to be written. held: waits of
// a client's message are held for the statement it is about to begin.
// explain: an EXPLAIN (ANALYZE, WAITS) is armed (its waits are timed). Side
// by side so that a statement start and a wait for the client test them all
// with one load.
struct alignas(4) TimingFlags {
    bool open;
    bool log_pending;
    bool held;
    bool explain;
};
extern TimingFlags timing_flags;

// Preload: the timer the hooks call (until then, one that does nothing).
void statements_register_timer(const StatementTimer *timer);
// The assign hook of pg_stat_waits.timing, with the new value (before
// PostgreSQL stores it): the hooks change the paths they take.
void statements_timer_switched(bool on);

}  // namespace psw
#pragma GCC visibility pop
