// Executor, planner, parse-analysis and utility hooks that publish the
// backend's state and statement ids into its own slot (DESIGN.md §4 "Hooks").
//
// Why so many hooks: an id must cover a statement's whole life — planning
// (planner hook; Bind plans before ExecutorStart), execution, ExecutorFinish
// (AFTER triggers, FK checks), each fetch of a protocol portal (ExecutorRun at
// level 0) and the commit that ends an autocommit statement (the ids stay until
// the transaction callback). A slot write is a few plain stores under a
// seqlock: no lock, syscall or allocation on this path.
#include "query_hooks.h"

#include "gucs.h"
#include "shared_state.h"
#include "timing.h"

namespace psw {

static post_parse_analyze_hook_type prev_post_parse_analyze = nullptr;
static planner_hook_type prev_planner = nullptr;
static ExecutorStart_hook_type prev_executor_start = nullptr;
static ExecutorRun_hook_type prev_executor_run = nullptr;
static ExecutorFinish_hook_type prev_executor_finish = nullptr;
static ExecutorEnd_hook_type prev_executor_end = nullptr;
static ProcessUtility_hook_type prev_process_utility = nullptr;

// Backend-local mirror of what the slot holds, so unchanged values are not
// rewritten and nested statements can restore their parent's id.
static int nesting_level = 0;
static BackendSlot *my_slot = nullptr;
static SlotData local;
static bool top_is_fetch = false;     // top-level statement is FETCH/MOVE
static bool top_ends_block = false;   // top-level statement is COMMIT/ROLLBACK/PREPARE

unsigned long long current_queryid() { return local.queryid; }
unsigned long long current_top_queryid() { return local.top_queryid; }

static BackendSlot *slot() {
    if (my_slot == nullptr && shared != nullptr && MyProc != nullptr) {
        int procno = compat_my_procno();
        if (procno < 0 || static_cast<uint32>(procno) >= shared->num_slots) return nullptr;
        my_slot = &shared->slots[procno];
        // Called from the first publish(): `local` already holds what the
        // caller is publishing; only the owner pid is new.
        local.pid = MyProcPid;
        my_slot->pub.write([](SlotData &d) { d = local; });
    }
    return my_slot;
}

static void publish() {
    BackendSlot *s = slot();
    if (s) s->pub.write([](SlotData &d) { d = local; });
}

static void statement_start(uint64 queryid) {
    local.state = kStateActive;
    local.top_queryid = queryid;
    local.queryid = queryid;
    local.query_start = GetCurrentStatementStartTimestamp();
    publish();
    timing_statement_start(queryid);
}

// A top-level statement finished. Inside an explicit transaction block the
// backend is now idle in transaction and keeps the statement's ids; otherwise
// it stays active until the commit callback (the commit belongs to it).
static void statement_end() {
    if (!top_ends_block && IsTransactionBlock() && local.state != kStateIdleInXact) {
        local.state = kStateIdleInXact;
        publish();
        timing_statement_end();
    }
}

static void set_queryid(uint64 queryid) {
    if (local.queryid == queryid) return;
    local.queryid = queryid;
    publish();
}

// Whether a nested executor's query id replaces the current one.
static bool attribute_nested(uint64 queryid) {
    if (queryid == 0) return false;
    if (nesting_level == 0 || guc_track == kTrackAll) return true;
    // FETCH from a cursor runs the cursor's query one level down.
    return nesting_level == 1 && top_is_fetch;
}

static void post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate) {
    if (prev_post_parse_analyze) prev_post_parse_analyze(pstate, query, jstate);
    if (nesting_level == 0 && query->queryId != 0 && shared) {
        top_is_fetch = false;
        top_ends_block = false;
        statement_start(compat_queryid(query->queryId));
    }
}

static PlannedStmt *planner(Query *parse, const char *query_string, int cursor_options, ParamListInfo params) {
    uint64 saved = local.queryid;
    bool nested = nesting_level > 0;
    const uint64 parse_id = compat_queryid(parse->queryId);
    if (shared && parse_id != 0) {
        if (!nested) {
            if (local.top_queryid != parse_id || local.state != kStateActive) statement_start(parse_id);
        } else if (guc_track == kTrackAll) {
            set_queryid(parse_id);
        }
    }
    PlannedStmt *result = prev_planner ? prev_planner(parse, query_string, cursor_options, params)
                                       : standard_planner(parse, query_string, cursor_options, params);
    // No PG_TRY here or below: a setjmp per hook would cost more than the
    // rest of the hook path. After an error the transaction callbacks reset
    // the state; an error caught by PL/pgSQL is healed when the enclosing
    // executor phase returns and restores its own saved values.
    if (nested && shared) set_queryid(saved);
    return result;
}

static void executor_start(QueryDesc *qd, int eflags) {
    if (shared && nesting_level == 0 && !top_is_fetch) {
        uint64 id = compat_queryid(qd->plannedstmt->queryId);
        // Bind/Execute of a prepared statement has no parse analysis.
        if (id != 0 && (local.top_queryid != id || local.state != kStateActive)) {
            top_ends_block = false;
            statement_start(id);
        }
    }
    if (prev_executor_start)
        prev_executor_start(qd, eflags);
    else
        standard_ExecutorStart(qd, eflags);
}

// Runs one executor phase with the statement's id attributed and the
// nesting level restored (by assignment, so a level left high by an error
// that PL/pgSQL caught further down is repaired here).
template <typename Phase>
static inline void run_nested(QueryDesc *qd, Phase &&phase) {
    uint64 saved = local.queryid;
    int saved_level = nesting_level;
    uint64 id = compat_queryid(qd->plannedstmt->queryId);
    bool attribute = shared && attribute_nested(id);
    if (attribute) set_queryid(id);
    nesting_level = saved_level + 1;
    phase();
    nesting_level = saved_level;
    // Level 0 keeps the id: the commit and idle-in-transaction belong to it.
    if (attribute && saved_level > 0) set_queryid(saved);
}

static void executor_run(PSW_EXECUTOR_RUN_PARAMS) {
    run_nested(qd, [&]() {
        if (prev_executor_run)
            prev_executor_run(PSW_EXECUTOR_RUN_ARGS);
        else
            standard_ExecutorRun(PSW_EXECUTOR_RUN_ARGS);
    });
}

static void executor_finish(QueryDesc *qd) {
    run_nested(qd, [&]() {
        if (prev_executor_finish)
            prev_executor_finish(qd);
        else
            standard_ExecutorFinish(qd);
    });
}

static void executor_end(QueryDesc *qd) {
    if (prev_executor_end)
        prev_executor_end(qd);
    else
        standard_ExecutorEnd(qd);
    if (shared && nesting_level == 0) statement_end();
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

static void process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                            ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                            DestReceiver *dest, QueryCompletion *qc) {
    bool top = nesting_level == 0;
    if (shared && top) {
        Node *stmt = pstmt->utilityStmt;
        top_is_fetch = IsA(stmt, FetchStmt);
        top_ends_block = ends_transaction_block(stmt);
        // pg_stat_statements (track_utility) zeroes pstmt->queryId before
        // calling down the hook chain; the id pg_stat_activity shows is still
        // the backend's reported one, so fall back to it (COMMIT/END of a
        // transaction block would otherwise carry no id while it flushes WAL).
        uint64 id = compat_queryid(pstmt->queryId != 0 ? pstmt->queryId : pgstat_get_my_query_id());
        // A cached utility statement (extended protocol, e.g. pgbench -M
        // prepared END) arrives with its id zeroed by pg_stat_statements
        // and nothing reported: recompute it as parse analysis did.
        if (id == 0) id = compat_utility_query_id(pstmt, query_string);
        statement_start(id);
    }
    int saved_level = nesting_level;
    nesting_level = saved_level + 1;
    if (prev_process_utility)
        prev_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    else
        standard_ProcessUtility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    nesting_level = saved_level;
    if (shared && top) {
        statement_end();
        top_is_fetch = false;
    }
}

// The transaction ended: the backend is idle (ids cleared, so idle time is
// never charged to the last statement), or idle in an aborted transaction
// block after an error.
static void xact_callback(XactEvent event, void *) {
    if (!shared || my_slot == nullptr) return;
    switch (event) {
        case XACT_EVENT_COMMIT:
        case XACT_EVENT_PARALLEL_COMMIT:
        case XACT_EVENT_PREPARE:
        case XACT_EVENT_ABORT:
        case XACT_EVENT_PARALLEL_ABORT: {
            bool aborted_in_block =
                (event == XACT_EVENT_ABORT) && !top_ends_block && IsTransactionBlock();
            local.state = aborted_in_block ? kStateIdleInXact : kStateIdle;
            nesting_level = 0;  // an error unwound every hook frame
            local.queryid = 0;
            local.top_queryid = 0;
            top_is_fetch = false;
            top_ends_block = false;
            publish();
            timing_statement_end();
            break;
        }
        default:
            break;
    }
}

// An error escaped every executor into the main loop inside a savepoint:
// the statement is gone. The main loop aborts with no portal active; a
// PL/pgSQL exception block aborts its subtransaction while the outer
// statement's portal is still running, and must keep the ids.
static void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void *) {
    if (!shared || my_slot == nullptr || event != SUBXACT_EVENT_ABORT_SUB || ActivePortal != nullptr) return;
    nesting_level = 0;
    local.state = kStateIdleInXact;
    local.queryid = 0;
    local.top_queryid = 0;
    publish();
    timing_statement_end();
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
