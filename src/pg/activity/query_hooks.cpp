// Executor, planner, parse-analysis and utility hooks, and the transaction
// callbacks, that feed the statement tracker (src/core/statement_tracker.h)
// and publish what it says into the backend's own slot (docs/architecture.md).
//
// Why so many hooks: an id must cover a statement's whole life — planning
// (planner hook; Bind plans before ExecutorStart), execution, ExecutorFinish
// (AFTER triggers, FK checks), each fetch of a protocol portal (ExecutorRun at
// level 0), transactions the statement runs inside itself, and the commit
// that ends an autocommit statement. A slot write is a few plain stores under
// a seqlock: no lock, syscall or allocation on this path.
//
// No PG_TRY in any hook: a setjmp per hook would cost more than the rest of
// the hook path. After an error the transaction callbacks reset the state; an
// error caught by PL/pgSQL is repaired by the subtransaction callbacks.
#include "query_hooks.h"

#include "../../core/statement_tracker.h"

#include "../gucs.h"
#include "../shared_state.h"
#include "../timing/timing.h"

namespace psw {

static post_parse_analyze_hook_type prev_post_parse_analyze = nullptr;
static planner_hook_type prev_planner = nullptr;
static ExecutorStart_hook_type prev_executor_start = nullptr;
static ExecutorRun_hook_type prev_executor_run = nullptr;
static ExecutorFinish_hook_type prev_executor_finish = nullptr;
static ExecutorEnd_hook_type prev_executor_end = nullptr;
static ProcessUtility_hook_type prev_process_utility = nullptr;

static BackendSlot *my_slot = nullptr;

static BackendSlot *slot() {
    if (my_slot == nullptr && shared != nullptr && MyProc != nullptr) {
        int procno = compat_my_procno();
        if (procno < 0 || static_cast<uint32>(procno) >= shared->num_slots) return nullptr;
        my_slot = &shared->slots[procno];
    }
    return my_slot;
}

// What the tracker needs from PostgreSQL and from exact timing.
struct HookEnv {
    void publish(const StatementIds &ids) {
        BackendSlot *s = slot();
        if (s == nullptr) return;
        s->pub.write([&](SlotData &d) {
            d.pid = MyProcPid;
            d.state = ids.state;
            d.queryid = ids.queryid;
            d.top_queryid = ids.top_queryid;
            d.query_start = ids.query_start;
        });
    }
    int64_t statement_start_time() { return GetCurrentStatementStartTimestamp(); }
    bool track_all() { return guc_track == kTrackAll; }
    bool in_transaction_block() { return IsTransactionBlock(); }
    void timing_start(uint64_t queryid) { timing_statement_start(queryid); }
    void timing_switch(uint64_t queryid) {
        if (timing_open) timing_attribute(queryid);
    }
    void timing_call(uint64_t queryid) {
        if (timing_open) timing_count_call(queryid);
    }
    void timing_end() {
        if (timing_open) timing_statement_end();
    }
};

static StatementTracker<HookEnv> tracker;

unsigned long long current_queryid() { return tracker.queryid(); }

static void post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate) {
    if (prev_post_parse_analyze) prev_post_parse_analyze(pstate, query, jstate);
    if (shared == nullptr) return;
    uint64 id = compat_queryid(query->queryId);
    // EXECUTE/PREPARE (and DEALLOCATE before 17) start a statement under
    // the id pg_stat_statements records them by (compat.h).
    if (query->commandType == CMD_UTILITY && tracker.level == 0)
        compat_untracked_utility_id(query->utilityStmt, &id);
    tracker.parsed(id);
}

// Each hook takes the tracker's fast path (top level, or nested without an
// id of its own: only the level moves) or saves and restores a frame.

static inline PlannedStmt *call_planner(Query *parse, const char *query_string, int cursor_options,
                                        ParamListInfo params) {
    return prev_planner ? prev_planner(parse, query_string, cursor_options, params)
                        : standard_planner(parse, query_string, cursor_options, params);
}

static PlannedStmt *planner(Query *parse, const char *query_string, int cursor_options, ParamListInfo params) {
    if (shared == nullptr) return call_planner(parse, query_string, cursor_options, params);
    if (tracker.nested_phase_attributes()) {
        StatementFrame f = tracker.plan_begin(compat_queryid(parse->queryId));
        PlannedStmt *result = call_planner(parse, query_string, cursor_options, params);
        tracker.phase_end(f);
        return result;
    }
    if (tracker.level == 0)
        tracker.enter_top_plan(compat_queryid(parse->queryId));
    else
        tracker.enter();
    PlannedStmt *result = call_planner(parse, query_string, cursor_options, params);
    tracker.leave();
    return result;
}

static inline void call_executor_start(QueryDesc *qd, int eflags) {
    if (prev_executor_start)
        prev_executor_start(qd, eflags);
    else
        standard_ExecutorStart(qd, eflags);
}

static void executor_start(QueryDesc *qd, int eflags) {
    if (shared == nullptr) return call_executor_start(qd, eflags);
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
    if (prev_executor_run)
        prev_executor_run(PSW_EXECUTOR_RUN_ARGS);
    else
        standard_ExecutorRun(PSW_EXECUTOR_RUN_ARGS);
}

// ExecutorRun and ExecutorFinish attribute alike: a nested phase under
// track = all runs under its own id; otherwise the top level (re)enters the
// statement and deeper levels only move the nesting level.
template <typename Phase>
static inline void run_phase(QueryDesc *qd, Phase &&phase) {
    if (shared == nullptr) return phase();
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

static void executor_run(PSW_EXECUTOR_RUN_PARAMS) {
    run_phase(qd, [&]() { call_executor_run(PSW_EXECUTOR_RUN_ARGS); });
}

static inline void call_executor_finish(QueryDesc *qd) {
    if (prev_executor_finish)
        prev_executor_finish(qd);
    else
        standard_ExecutorFinish(qd);
}

static void executor_finish(QueryDesc *qd) {
    run_phase(qd, [&]() { call_executor_finish(qd); });
}

static inline void call_executor_end(QueryDesc *qd) {
    if (prev_executor_end)
        prev_executor_end(qd);
    else
        standard_ExecutorEnd(qd);
}

static void executor_end(QueryDesc *qd) {
    if (shared == nullptr) return call_executor_end(qd);
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

static bool ends_transaction_block(Node *stmt) {
    if (!IsA(stmt, TransactionStmt)) return false;
    switch (reinterpret_cast<TransactionStmt *>(stmt)->kind) {
        case TRANS_STMT_COMMIT:
        case TRANS_STMT_ROLLBACK:
        case TRANS_STMT_PREPARE:
        case TRANS_STMT_COMMIT_PREPARED:
        case TRANS_STMT_ROLLBACK_PREPARED:
            return true;
        default:
            return false;
    }
}

// The id a top-level utility statement runs under.
static uint64 top_utility_id(PlannedStmt *pstmt, const char *query_string, uint64 id) {
    uint64 mapped;
    if (compat_untracked_utility_id(pstmt->utilityStmt, &mapped)) return mapped;
    // pg_stat_statements (track_utility) zeroes pstmt->queryId in a plan it
    // has run once (a cached utility statement); the id is then the one just
    // parse-analyzed, or else the one the backend reported (COMMIT/END of a
    // transaction block would otherwise carry no id while it flushes WAL).
    if (id == 0) id = tracker.fresh_top_queryid();
    if (id == 0) id = compat_queryid(pgstat_get_my_query_id());
    // A cached utility statement (extended protocol, e.g. pgbench -M
    // prepared END) with nothing reported: recompute its id as parse
    // analysis did.
    if (id == 0) id = compat_utility_query_id(pstmt, query_string);
    return id;
}

static void process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                            ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                            DestReceiver *dest, QueryCompletion *qc) {
    uint64 id = compat_queryid(pstmt->queryId);
    StatementFrame f{};
    if (shared) {
        if (tracker.level == 0) {
            Node *stmt = pstmt->utilityStmt;
            id = top_utility_id(pstmt, query_string, id);
            f = tracker.utility_begin(id, IsA(stmt, FetchStmt), ends_transaction_block(stmt), IsA(stmt, ExecuteStmt));
        } else {
            f = tracker.utility_begin(id, false, false, false);
        }
    }
    if (prev_process_utility)
        prev_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    else
        standard_ProcessUtility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    if (shared) tracker.utility_end(f, id);
}

// A transaction ended. The main loop commits or aborts a client statement's
// transaction only after its portal has stopped; a transaction that ends
// while a portal runs belongs to the running statement (CREATE INDEX
// CONCURRENTLY, VACUUM, a procedure's COMMIT/ROLLBACK), which goes on.
static void xact_callback(XactEvent event, void *) {
    if (!shared || my_slot == nullptr) return;
    switch (event) {
        case XACT_EVENT_COMMIT:
        case XACT_EVENT_PARALLEL_COMMIT:
        case XACT_EVENT_PREPARE:
        case XACT_EVENT_PARALLEL_ABORT:
            tracker.transaction_end(false, ActivePortal != nullptr, false);
            break;
        case XACT_EVENT_ABORT:
            tracker.transaction_end(true, ActivePortal != nullptr, ActivePortal == nullptr && IsTransactionBlock());
            break;
        default:
            break;
    }
}

// A PL/pgSQL exception block runs in a subtransaction; the main loop aborts
// a client savepoint's subtransaction with no portal active.
static void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void *) {
    if (!shared) return;
    if (event == SUBXACT_EVENT_START_SUB)
        tracker.subtransaction_start(GetCurrentTransactionNestLevel());
    else if (event == SUBXACT_EVENT_ABORT_SUB && my_slot != nullptr)
        tracker.subtransaction_abort(GetCurrentTransactionNestLevel(), ActivePortal != nullptr);
}

void install_query_hooks() {
    prev_post_parse_analyze = post_parse_analyze_hook;
    post_parse_analyze_hook = post_parse_analyze;
    prev_planner = planner_hook;
    planner_hook = planner;
    prev_executor_start = ExecutorStart_hook;
    ExecutorStart_hook = executor_start;
    prev_executor_run = ExecutorRun_hook;
    ExecutorRun_hook = executor_run;
    prev_executor_finish = ExecutorFinish_hook;
    ExecutorFinish_hook = executor_finish;
    prev_executor_end = ExecutorEnd_hook;
    ExecutorEnd_hook = executor_end;
    prev_process_utility = ProcessUtility_hook;
    ProcessUtility_hook = process_utility;
    RegisterXactCallback(xact_callback, nullptr);
    RegisterSubXactCallback(subxact_callback, nullptr);
}

}  // namespace psw
