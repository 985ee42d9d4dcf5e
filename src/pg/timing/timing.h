// Exact timing: blocking-call wrappers installed in the executable's GOT at
// preload (timing_wrappers.cpp), backend-local accumulators flushed into
// shared tables, the SQL readers (timing_views.cpp). docs/architecture.md
// follows one timed wait through these files.
#pragma once

#include <cstdint>
#include <cstdio>

#include "../shared_state.h"
#include "../../core/executions.h"
#include "../../core/statement_ledger.h"
#include "../../core/timing_stats.h"

namespace psw {

struct ProcSample;  // activity/proc_reader.h

extern const ShmemPart timing_part;

// Shared timing tables (nullptr until shared memory exists).
struct TimingShared {
    SharedEvents events;
    // QueryTable follows at query_table_offset().
};
extern TimingShared *timing_shared;
QueryTable *timing_query_table();

// Preload (postmaster only, from start_features): patch the GOT.
void timing_install();

// Statement boundaries from query_hooks.cpp: a top-level statement starts /
// ends (its commit included). Cheap no-ops when timing is off.
void timing_statement_start(uint64 queryid);
void timing_statement_end();
// The same end, seen only once a later statement's message had replaced the
// text in debug_query_string and the status entry: a slow run is kept
// without text rather than with the other statement's.
void timing_statement_end_late();
// timing_flags.open: whether a top-level statement is being timed (callers
// test it before the calls below, which assume it). timing_flags.log_pending:
// see executions_write_log(). timing_flags.held: waits of a client's message
// are held for the statement it is about to begin (timing_wrappers.cpp).
// Side by side so that a statement start and a wait for the client test
// them all with one load.
struct alignas(4) TimingFlags {
    bool open;
    bool log_pending;
    bool held;
    bool unused;
};
extern TimingFlags timing_flags;
// From now on the statement's time belongs to queryid (a nested statement
// under track = all, or the parent again; 0 = the top-level statement).
void timing_attribute(uint64 queryid);
// One execution of queryid finished (the per-query CPU row's calls).
void timing_count_call(uint64 queryid);
// An execution of queryid ended at top level (timed server mode): one call
// for it; true when it was the open statement's own (or queryid is 0).
bool timing_top_call(uint64 queryid);
// The id the open statement is timed under (0 when none is open).
uint64 timing_statement_id();
// An execution ended with no portal running (its portal dropped after the
// run): one call if it was the open statement's own id, or the id of the
// statement started before it (a portal dropped at the next statement's
// Bind), or, with none open, the last statement's; anything else ran
// nested and counts nothing.
// Whether it was the open statement's own.
bool timing_dropped_portal_call(uint64 queryid);

// Publishes what this process has accumulated and not yet flushed: a
// session reading the exact views sees its own waits, and timing turned
// off leaves nothing behind (other sessions see a backend's waits once it
// has been idle 10 ms, or within a second). No error, no allocation.
void timing_flush_own();

// One bounded eviction step of the per-query table (at most max_visits
// slots), from the sampler's evict_tables_step(); backends never evict.
void timing_evict_step(uint64 max_visits);

// Clears the shared timing tables (pg_stat_waits_reset()).
void timing_reset();
// Persistence inside pg_stat/pg_stat_waits.stat: timing_save writes one
// self-describing block (magic, format version, sizes) at the current file
// position; timing_load reads such a block and merges it into the (fresh)
// tables. Both return false on I/O error or a block from another format;
// after a false load the caller should discard the rest of the file.
bool timing_save(FILE *f);
bool timing_load(FILE *f);

// The clock of exact timing (ns, CLOCK_MONOTONIC base; RDTSC-based where
// the TSC is invariant), the same in every process.
int64 timing_now_ns();
const char *timing_clock_name();  // "tsc" or "clock_gettime"

// Slow executions (executions.cpp): the last kExecRingSize top-level runs
// that reached pg_stat_waits.capture_min_duration.
constexpr uint32 kExecRingSize = 1000;
extern const ShmemPart executions_part;
// A top-level statement of queryid, run by this session, ended after elapsed_ns
// (at least the threshold) having waited `waits`: keep it, with the text
// the backend is running unless own_text is false (its end was seen only
// when the next statement began, whose text that is by then). first_start:
// PostgreSQL's statement start when the run's first wait began, if that
// came before the statement had begun (a wait in its Parse or Bind
// message, whose start PostgreSQL has replaced since), else 0. Never
// raises an error, never allocates.
void executions_capture(const StatementWaits &waits, int64 elapsed_ns, uint64 queryid, bool own_text,
                        TimestampTz first_start);
// With pg_stat_waits.capture_log, a captured run waits here for its LOG
// line: capture cannot log (it may run inside a commit callback, where an
// error would be a PANIC). The line is written at the next point where
// logging is safe: the backend's next statement start or parse analysis,
// its next wait for the client (timing on) or its exit. Pending while
// timing_flags.log_pending.
void executions_write_log();
void executions_reset();
// The ring (nullptr until shared memory exists), for persistence.
ExecRing *executions_ring();
uint64 executions_dropped();

// Benchmark support (the test module's pg_stat_waits_bench_wrapper, through
// pg_stat_waits_test_bench_wrapper_ns): CPU ns per call. Modes: 0/1/2
// fsync(-1) directly, through the wrapper with timing off, with timing on;
// 3 the two clock readings a timed call adds; 4/5/6 a no-op called
// directly, through a wrapper with timing off, with timing on.
double timing_bench_wrapper_ns(int mode, int64 n);

// Milliseconds spent so far in the blocking call s is inside, for
// pg_stat_waits_activity.wait_time; *valid is false when s publishes none
// (timing_wrappers.cpp).
double live_wait_ms(const ProcSample &s, bool *valid);

}  // namespace psw
