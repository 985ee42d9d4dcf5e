// ProcessUtility: a client's utility statement's id (a cached one has none),
// FETCH and EXECUTE attributed as pg_stat_statements records them, and the
// utility statement's timed begin and end.
#include "internal.h"

namespace psw {

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

static inline void call_process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                                        ProcessUtilityContext context, ParamListInfo params,
                                        QueryEnvironment *query_env, DestReceiver *dest, QueryCompletion *qc) {
    next_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
}

// The id of a top-level utility statement. pg_stat_statements (track_utility)
// zeroes pstmt->queryId in a plan it has run once (a cached utility
// statement); the id is then the one just parse-analyzed, or else the one
// the backend reported (COMMIT/END of a transaction block would otherwise
// carry no id while it flushes WAL), or else (a cached utility statement of
// the extended protocol, e.g. pgbench -M prepared END, with nothing
// reported) recomputed as parse analysis did.
// EXECUTE, PREPARE (and DEALLOCATE before 17) run under the id
// pg_stat_statements records them by instead (compat.h).
static uint64 top_utility_id(PlannedStmt *pstmt, const char *query_string, uint64 parsed) {
    uint64 mapped;
    if (compat_untracked_utility_id(pstmt->utilityStmt, &mapped)) return mapped;
    uint64 id = compat_queryid(pstmt->queryId);
    if (id == 0) id = parsed;
    if (id == 0 && MyBEEntry != nullptr) id = compat_queryid(pgstat_get_my_query_id());
    if (id == 0) id = compat_utility_query_id(pstmt, query_string);
    return id;
}

// Server mode. A client's utility statement gets its id in PostgreSQL's
// entry if it has none (a cached one run by Execute). FETCH/MOVE from a
// cursor spends its time running the cursor's query: the slot says so for
// as long as it runs (keyed by the statement's start, so an error that
// skips the reset leaves nothing behind).
static void server_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                           ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                           DestReceiver *dest, QueryCompletion *qc) {
    Node *stmt = pstmt->utilityStmt;
    bool fetch = false;
    uint64 cursor = 0;
    QueryDesc *cursor_qd = nullptr;
    const bool top = context == PROCESS_UTILITY_TOPLEVEL && MyBEEntry != nullptr;
    if (top) {
        if (server_queryid() == 0) {
            note_no_server_id();
            compat_report_query_id(top_utility_id(pstmt, query_string, 0), false);
        }
        uint64 prepared;
        if (IsA(stmt, ExecuteStmt) && compat_untracked_utility_id(stmt, &prepared) && prepared != 0) {
            // PostgreSQL reports EXECUTE's own id; pg_stat_statements records
            // the prepared statement, and so do the slot's ids, for the whole
            // statement (commit included: the entry is keyed by its start).
            publish_server(kStmtActive, prepared, prepared, GetCurrentStatementStartTimestamp());
            server_execute_published = true;
        }
        if (IsA(stmt, FetchStmt)) {
            const FetchStmt *fs = reinterpret_cast<const FetchStmt *>(stmt);
            Portal p = fs->portalname != nullptr ? GetPortalByName(fs->portalname) : nullptr;
            cursor_qd = p != nullptr ? p->queryDesc : nullptr;
            cursor = cursor_qd != nullptr ? compat_queryid(cursor_qd->plannedstmt->queryId) : 0;
            uint64 top_id = server_queryid();
            if (cursor != 0 && top_id != 0 && cursor != top_id) {
                publish_server(kStmtActive, cursor, top_id, GetCurrentStatementStartTimestamp());
                fetch = true;
            }
        }
    }
    if (!top || !server_timed) {
        call_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
        if (fetch) publish_server(kStmtUnknown, 0, 0, 0);
        return;
    }
    // Timed server mode, a client's utility statement: it begins here unless
    // its parse analysis began it; FETCH/MOVE spends its time running the
    // cursor's query, timed under that, and the FETCH that first runs it
    // counts the cursor's one call (its ExecutorEnd, at CLOSE or commit,
    // is not top level here); the statement's end is one call.
    uint64 pg = server_queryid();
    if (timed_new(pg)) timed_begin(pg, top_utility_id(pstmt, query_string, 0));
    const bool cursor_time = cursor != 0 && timing_flags.open;
    const bool cursor_first_run = cursor_time && !cursor_qd->already_executed;
    if (cursor_time) timer.attribute(cursor);
    in_top_utility = true;
    call_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    in_top_utility = false;
    if (cursor_time && timing_flags.open) {
        if (cursor_first_run && cursor_qd->already_executed) timer.count_call(cursor);
        timer.attribute(0);
    }
    if (fetch) publish_server(kStmtUnknown, 0, 0, 0);
    if (timing_flags.open) {
        timer.top_call(timer.statement_id());
        if (!ends_transaction_block(stmt)) timed_execution_done();
    }
}

void process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                            ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                            DestReceiver *dest, QueryCompletion *qc) {
    if (shared == nullptr)
        return call_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    if (!tracking())
        return server_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    uint64 id = compat_queryid(pstmt->queryId);
    StatementFrame f{};
    if (tracker.level == 0) {
        Node *stmt = pstmt->utilityStmt;
        id = top_utility_id(pstmt, query_string, tracker.fresh_top_queryid());
        f = tracker.utility_begin(id, IsA(stmt, FetchStmt), ends_transaction_block(stmt), IsA(stmt, ExecuteStmt));
    } else {
        f = tracker.utility_begin(id, false, false, false);
    }
    call_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    tracker.utility_end(f, id);
}

}  // namespace psw
