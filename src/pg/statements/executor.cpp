// The executor hooks: ExecutorRun repairs a protocol Execute's id in server
// mode; in tracker mode each phase moves the tracker; in timed server mode a
// top-level ExecutorEnd is one call and may end the statement.
#include "internal.h"

namespace psw {

static inline void call_executor_start(QueryDesc *qd, int eflags) {
    next_executor_start(qd, eflags);
}

// Installed with the tracker (server mode: standard_ExecutorStart reports
// the id itself).
void executor_start(QueryDesc *qd, int eflags) {
    if (shared == nullptr || mode != kModeTracker) return call_executor_start(qd, eflags);
    if (tracker.nested_phase_attributes()) {
        StatementFrame f = tracker.executor_start_begin(compat_queryid(qd->plannedstmt->queryId));
        call_executor_start(qd, eflags);
        tracker.phase_end(f);
        return;
    }
    if (tracker.level == 0)
        tracker.enter_top_executor_start(compat_queryid(qd->plannedstmt->queryId));
    else
        tracker.enter();
    call_executor_start(qd, eflags);
    tracker.leave();
}

static inline void call_executor_run(PSW_EXECUTOR_RUN_PARAMS) {
    next_executor_run(PSW_EXECUTOR_RUN_ARGS);
}

// ExecutorRun and ExecutorFinish attribute alike: a nested phase under
// track = all runs under its own id; otherwise the top level (re)enters the
// statement and deeper levels only move the nesting level.
template <typename Phase>
static inline void run_phase(QueryDesc *qd, Phase &&phase) {
    if (tracker.nested_run_attributes()) {
        StatementFrame f = tracker.run_begin(compat_queryid(qd->plannedstmt->queryId));
        phase();
        tracker.phase_end(f);
        return;
    }
    if (tracker.level == 0)
        tracker.enter_top_run(compat_queryid(qd->plannedstmt->queryId));
    else
        tracker.enter();
    phase();
    tracker.leave();
}

__attribute__((noinline)) static void executor_run_slow(PSW_EXECUTOR_RUN_PARAMS) {
    if (shared == nullptr) return call_executor_run(PSW_EXECUTOR_RUN_ARGS);
    if (!tracking()) {
        if (MyBEEntry != nullptr && MyBEEntry->st_query_id == 0) {
            note_no_server_id();
            server_claim(compat_queryid(qd->plannedstmt->queryId));
        }
        if (server_timed) timed_phase(server_queryid());
        return call_executor_run(PSW_EXECUTOR_RUN_ARGS);
    }
    run_phase(qd, [&]() { call_executor_run(PSW_EXECUTOR_RUN_ARGS); });
}

// Server mode: a protocol Execute of a portal started at Bind (15-17:
// PostgreSQL has no id for it).
void executor_run(PSW_EXECUTOR_RUN_PARAMS) {
    if (__builtin_expect(server_plain && my_be->st_query_id != 0, 1) || timed_current())
        return call_executor_run(PSW_EXECUTOR_RUN_ARGS);
    executor_run_slow(PSW_EXECUTOR_RUN_ARGS);
}

static inline void call_executor_finish(QueryDesc *qd) {
    next_executor_finish(qd);
}

// Installed with the tracker.
void executor_finish(QueryDesc *qd) {
    if (shared == nullptr || mode != kModeTracker) return call_executor_finish(qd);
    run_phase(qd, [&]() { call_executor_finish(qd); });
}

static inline void call_executor_end(QueryDesc *qd) {
    next_executor_end(qd);
}

// A block's statement whose portal is dropped with no portal running: at
// the end of its own simple Query message (its text still current), or by a
// later statement's Bind of the unnamed portal in a pipeline, which has
// already put that statement's text in debug_query_string and the status
// entry. The same prepared statement again is the same text.
__attribute__((noinline, cold)) static void dropped_portal_statement_end(const char *source_text) {
    const char *current = debug_query_string;
    if (current == nullptr || current == source_text || strcmp(current, source_text) == 0)
        timer.end();
    else
        timer.end_late();
}

// Timed server mode: a top-level execution ends (see above).
// What it tests is read after ExecutorEnd, which leaves it in place (the
// running portal, the query's text and plan), so nothing is kept across
// the call.
__attribute__((noinline)) static void timed_executor_end(QueryDesc *qd) {
    call_executor_end(qd);
    if (in_top_utility) return;
    const Portal portal = ActivePortal;
    const uint64 id = compat_queryid(qd->plannedstmt->queryId);
    // Both return true only while a statement is open.
    if (portal == nullptr) {
        if (timer.dropped_portal_call(id) && IsTransactionBlock()) dropped_portal_statement_end(qd->sourceText);
    } else if (timing_flags.open && qd->sourceText == portal->sourceText && timer.top_call(id)) {
        timed_execution_done();
    }
}

__attribute__((noinline)) static void executor_end_other(QueryDesc *qd) {
    if (shared == nullptr || mode != kModeTracker) return call_executor_end(qd);
    if (tracker.nested_phase_attributes()) {
        uint64 id = compat_queryid(qd->plannedstmt->queryId);
        StatementFrame f = tracker.executor_end_begin(id);
        call_executor_end(qd);
        tracker.executor_end_done(f, id);
        return;
    }
    uint64 id = compat_queryid(qd->plannedstmt->queryId);
    call_executor_end(qd);
    tracker.executor_end_unattributed(id);
}

// Installed with the tracker or with timing.
void executor_end(QueryDesc *qd) {
    if (__builtin_expect(server_timed, 1)) return timed_executor_end(qd);
    executor_end_other(qd);
}

}  // namespace psw
