// Exact timing of statements: the statement hooks' timer (statements/timer.h)
// — a statement's start, the ids its time is charged to, its calls, its
// end — the waits of a client's message held for the statement it begins,
// and the settings of exact timing.
#include "local.h"

namespace psw {

StatementLedger ledger;
// The statement started before the current one, open or already closed: its
// portal may be dropped while the current one runs (at the current one's
// Bind, extended protocol inside a transaction block). 0: none.
static uint64 prev_statement_id = 0;
Oid stmt_userid = InvalidOid;
// Slow executions: when the statement started, and its waits per event
// (cleared with one store at its start, read only if it turns out slow).
// The waits reach stmt_waits when local_timing hands them over (every
// flush while the statement is open, the last one at its end), so a timed
// call pays nothing for it.
static int64 stmt_start_ns = 0;
int64 message_arrived_ns = 0;
StatementWaits stmt_waits;
// The open statement is being ended by the next one's start.
static bool ending_late = false;
// Waits of a client's message before its statement began (held_waits.h):
// parse analysis locking its tables, a Bind locking its cached plan's.
static HeldWaits held_waits;
// PostgreSQL's statement start when the first of them began, and the start
// of the last statement that took held waits (its slow run reports it).
static TimestampTz held_query_start = 0;
static int64 adopted_start_ns = -1;
static TimestampTz adopted_query_start = 0;

// ---- waits before a statement begins ------------------------------------------
// A client's message can wait before the hook that begins its statement
// runs: parse analysis takes its tables' locks before post_parse_analyze,
// and a Bind takes a cached plan's locks before the Execute whose first
// hook begins it. A statement queued behind another session's lock (a
// migration's ACCESS EXCLUSIVE) waits exactly there. Such a wait, outside
// any statement while a client's message runs a text, is held; when a
// statement of the same text begins before the backend waits for the
// client again, the held waits become its own and it starts at the first
// of them (timing_statement_start). Otherwise they are counted outside any
// statement, as a wait between statements always was.

// From here on, waits added to local_timing are queryid's (run by userid).
static void attribute_pending_to(uint64 queryid, Oid userid) {
    if (pending_queryid == queryid) return;
    if (attributed_pending()) flush(now_ns());
    pending_queryid = queryid;
    pending_userid = userid;
}

void release_held_waits() {
    timing_flags.held = false;
    attribute_pending_to(0, InvalidOid);
    held_waits.drain([](uint16_t idx, uint64_t ns) { local_timing.add(idx, ns, false); });
}

__attribute__((noinline)) bool hold_wait(uint32 info, uint16_t idx, int64 t0, int64 t1) {
    // A client backend (or single-user mode) inside a message with a text;
    // waits for the client itself are never a statement's.
    if (debug_query_string == nullptr || (MyBackendType != B_BACKEND && IsUnderPostmaster) ||
        (info & 0xFF000000U) == PG_WAIT_CLIENT || timing_shared == nullptr)
        return false;
    uint64 key = held_text_key(debug_query_string);
    if (timing_flags.held && held_waits.key() != key) release_held_waits();  // another text's
    if (held_waits.empty()) held_query_start = MyBEEntry != nullptr ? MyBEEntry->st_activity_start_timestamp : 0;
    if (!held_waits.hold(key, idx, t0, static_cast<uint64_t>(t1 - t0))) return false;
    timing_flags.held = true;
    return true;
}

// The statement just begun (queryid, at the ledger's start) takes the held
// waits if they were its text's.
static void adopt_held_waits(uint64 queryid) {
    if (debug_query_string == nullptr || held_text_key(debug_query_string) != held_waits.key())
        return release_held_waits();
    timing_flags.held = false;
    ledger.start(queryid, held_waits.start_ns());
    stmt_start_ns = held_waits.start_ns();
    adopted_start_ns = stmt_start_ns;
    adopted_query_start = held_query_start;
    attribute_pending_to(queryid, stmt_userid);
    held_waits.drain([](uint16_t idx, uint64_t ns) {
        local_timing.add(idx, ns, true);
        ledger.add_wait(ns);
    });
}

// ---- statements -----------------------------------------------------------------

// A ledger row (CPU time and calls of one id) goes to its (queryid, CPU)
// entry, which the view shows as it is.
static void spill_row(const LedgerRow &r) { hold_cpu_row(r.queryid, stmt_userid, r.calls, r.cpu_ns); }

// Whether this process times its statements: one with a PGPROC, not a
// parallel worker (its leader times the statement), shared memory there.
// All three are settled before a process runs its first statement and stay
// so while it runs statements, so a yes is kept (a no is asked again: it
// may come from a call before the process was set up).
static bool process_times_statements = false;
// pg_stat_waits.timing on in a process that times its statements: what a
// statement start tests, one flag for both (kept by assign_timing() and
// decide_process_times_statements()).
static bool statements_timed = false;

__attribute__((noinline)) static bool decide_process_times_statements() {
    process_times_statements = MyProc != nullptr && !IsParallelWorker() && timing_shared != nullptr;
    if (process_times_statements && !exit_hook_registered) register_exit_hook();
    statements_timed = process_times_statements && guc_timing;
    return process_times_statements;
}

// Whether a statement of queryid began (timed) at now.
static inline bool begin_statement(uint64 queryid) {
    const int64 arrived = message_arrived_ns;
    message_arrived_ns = 0;
    // Waits attributed so far belong to whatever came before this statement.
    if (attributed_pending()) flush(now_ns());
    // (statements_timed is off with timing on only before the process has
    // decided, or after it decided no: it asks again.)
    if (queryid == 0 || (!statements_timed && !(guc_timing && decide_process_times_statements()))) return false;
    stmt_userid = GetUserId();
    int64 t = arrived != 0 ? arrived : now_ns();
    ledger.start(queryid, t);
    stmt_start_ns = t;
    stmt_waits.clear();
    timing_flags.open = true;
    return true;
}

void timing_statement_end_late() {
    ending_late = true;
    timing_statement_end();
    ending_late = false;
}

// A statement start with a flag up: the statement that is still open (its
// end was missed) ends, and may leave a slow run's LOG line, which can be
// written here (a hook runs: timing.h); held waits go to the new statement.
__attribute__((noinline)) static void statement_start_flagged(uint64 queryid) {
    if (timing_flags.open) timing_statement_end_late();
    if (timing_flags.log_pending) executions_write_log();
    bool begun = begin_statement(queryid);
    if (timing_flags.held) {
        if (begun)
            adopt_held_waits(queryid);
        else
            release_held_waits();
    }
}

void timing_statement_start(uint64 queryid) {
    prev_statement_id = ledger.last_statement();
    // Usually no flag is up: one test for all.
    if (__builtin_expect(any_flag(), 0)) return statement_start_flagged(queryid);
    begin_statement(queryid);
}

void timing_attribute(uint64 queryid) { ledger.switch_to(queryid, now_ns(), spill_row); }

void timing_count_call(uint64 queryid) { ledger.count_call(queryid, spill_row); }

bool timing_top_call(uint64 queryid) { return queryid == 0 || ledger.count_top_call(queryid, spill_row); }

uint64 timing_statement_id() { return ledger.statement(); }

// The other cases of timing_dropped_portal_call.
__attribute__((noinline)) static bool dropped_portal_call_other(uint64 queryid) {
    if (queryid == 0) return false;
    if (timing_flags.open) {
        if (queryid == prev_statement_id) ledger.count_call(queryid, spill_row);
        return false;
    }
    // Between statements: the last one ended when the backend waited for
    // its client, and its portal goes at this Bind before the next begins
    // (or the one before it, when the last was only a protocol Parse, as a
    // client preparing its next statement sends).
    if ((queryid == ledger.last_statement() || queryid == prev_statement_id) && guc_timing &&
        timing_shared != nullptr)
        hold_cpu_row(queryid, stmt_userid, 1, 0);
    return false;
}

// The usual case tested first, out of the way of the others' register saves:
// the open statement's own execution.
bool timing_dropped_portal_call(uint64 queryid) {
    if (__builtin_expect(ledger.count_own_call(queryid), 1)) return true;
    return dropped_portal_call_other(queryid);
}

__attribute__((noinline, cold)) static void capture_slow_run(int64 t) {
    executions_capture(stmt_waits, t - stmt_start_ns, ledger.statement(), !ending_late,
                       stmt_start_ns == adopted_start_ns ? adopted_query_start : 0);
}

void timing_statement_end() {
    if (!timing_flags.open) return;
    int64 t = now_ns();
    if (attributed_pending()) flush_waits(t);  // its waits, under their ids (and into stmt_waits)
    timing_flags.open = false;
    pending_queryid = 0;
    message_arrived_ns = 0;  // a pipelined next statement reads the clock
    // Slow executions: the one comparison every statement pays.
    if (__builtin_expect(t - stmt_start_ns >= capture_min_ns, 0)) capture_slow_run(t);
    ledger.close_open(t, spill_row);  // (open: timing_flags.open was)
    // A backend that never goes idle (a pipelining client) still publishes
    // its CPU rows once a second; the statement that turned timing off
    // publishes them at once (no wrapper flushes them later: assign_timing()
    // made this test true).
    if (t - last_cpu_flush_ns >= kFlushIntervalNs) flush_cpu_rows(t);
}

// ---- the hooks' timer and the settings -----------------------------------------------

static const StatementTimer statement_timer = {
    &guc_timing,
    timing_statement_start,
    timing_statement_end,
    timing_statement_end_late,
    timing_attribute,
    timing_count_call,
    timing_top_call,
    timing_statement_id,
    timing_dropped_portal_call,
    executions_write_log,
};

bool guc_timing = false;
int guc_capture_min_duration_ms = kCaptureMinDurationDefaultMs;
int64_t capture_min_ns = static_cast<int64_t>(kCaptureMinDurationDefaultMs) * 1000000;
bool guc_capture_log = false;

// The statement-end check compares nanoseconds: keep them next to the GUC
// (off = a threshold no statement reaches).
static void assign_capture_min_duration(int newval, void *) {
    capture_min_ns = newval < 0 ? INT64_MAX : static_cast<int64_t>(newval) * 1000000;
}

// Timing turned off publishes what the wrappers had not flushed yet: with it
// off they never reach another flush point. The statement hooks change the
// paths they take.
static void assign_timing(bool newval, void *) {
    statements_timed = newval && process_times_statements;
    if (!newval) {
        timing_flush_own();
        // The statement still open ends untimed by any wrapper: its end
        // publishes its CPU rows at once (the clock is past a second since
        // boot, so its once-a-second test holds).
        last_cpu_flush_ns = 0;
    }
    statements_timer_switched(newval);
    timing_switches_changed(newval);
}

void define_timing_gucs() {
    statements_register_timer(&statement_timer);
    DefineCustomBoolVariable("pg_stat_waits.timing", "Time every wait and every query exactly.", nullptr,
                             &guc_timing, false, PGC_SUSET, 0, nullptr, assign_timing, nullptr);
    DefineCustomIntVariable("pg_stat_waits.capture_min_duration",
                            "With exact timing, keep top-level statements running at least this long in "
                            "pg_stat_waits_executions; -1 turns it off.",
                            nullptr, &guc_capture_min_duration_ms, kCaptureMinDurationDefaultMs, -1, INT_MAX,
                            PGC_SUSET, GUC_UNIT_MS, nullptr, assign_capture_min_duration, nullptr);
    DefineCustomBoolVariable("pg_stat_waits.capture_log",
                             "Also write each run kept in pg_stat_waits_executions to the server log.", nullptr,
                             &guc_capture_log, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
}

}  // namespace psw
