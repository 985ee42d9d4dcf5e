// Parse analysis and planning: where a client's statement begins. In server
// mode the hooks repair PostgreSQL's own report when it has no id or an older
// one; in timed server mode a client's top-level parse analysis begins the
// timed statement; in tracker mode the tracker follows the phase.
#include "internal.h"

namespace psw {

// A phase of a statement about to run with PostgreSQL's id still 0: a Bind
// (planning) or Execute message, which reset the id and (15-17) report none
// of their own; whatever runs first belongs to the client's statement.
// The hooks test for it inline and call this only then.
__attribute__((noinline, cold)) void server_claim(uint64 id) {
    if (id != 0) compat_report_query_id(id, false);
}

// A client's top-level parse analysis: a new statement (timed under the
// prepared statement's id for an EXECUTE, not timed for a PREPARE). The
// statements a top-level utility statement analyzes in the client's text
// (PREPARE's query, CREATE VIEW's) are part of it.
__attribute__((noinline)) static void timed_parsed_utility(const Query *query, uint64 id) {
    uint64 mapped;
    timed_begin(id, compat_untracked_utility_id(query->utilityStmt, &mapped) ? mapped : id);
}

// (The utility case is out of line: its out-parameter would give every
// statement's path a stack-protector canary.)
static inline void timed_parsed(const Query *query) {
    if (in_top_utility) return;
    uint64 id = compat_queryid(query->queryId);
    if (id == 0) return;
    if (query->commandType == CMD_UTILITY) return timed_parsed_utility(query, id);
    timed_begin(id, id);
}


// Parse analysis of the text a client message carries (not a function's).
static inline bool parses_client_text(const ParseState *pstate) {
    return debug_query_string != nullptr && pstate->p_sourcetext == debug_query_string;
}

// The second and later statements of a client's query string: 15-17 keep
// the first one's id (PostgreSQL reports an id only while it has none). A
// client message's own statement is parse analysis of the text the message
// carries (a nested statement's text is its function's; a prepared
// statement re-analyzed at Bind is the message's own statement, and its id
// changes only if its meaning did).
static void server_parsed(ParseState *pstate, Query *query) {
    // A slow run's LOG line still to be written: timing was turned off at
    // the end of that run, and server_fast stays off until it is.
    if (__builtin_expect(timing_flags.log_pending, 0)) {
        timer.write_log();
        update_server_fast();
    }
    uint64 id = compat_queryid(query->queryId);
    uint64 cur = server_queryid();
    bool client_top = parses_client_text(pstate);
    if (server_execute_published && client_top) {
        // A later statement of the same query string (same start time).
        server_execute_published = false;
        publish_server(kStmtUnknown, 0, 0, 0);
    }
    if (cur != 0 && id != 0 && cur != id && client_top) compat_report_query_id(id, true);
}

__attribute__((noinline)) static void post_parse_analyze_slow(PSW_POST_PARSE_ANALYZE_PARAMS) {
    if (prev_post_parse_analyze) prev_post_parse_analyze(PSW_POST_PARSE_ANALYZE_ARGS);
    if (shared == nullptr) return;
    if (mode == kModeTracker ? tracker.level == 0 : parses_client_text(pstate) || !client_backend()) settle_mode();
    if (mode == kModeTracker) {
        uint64 id = compat_queryid(query->queryId);
        // EXECUTE/PREPARE (and DEALLOCATE before 17) start a statement under
        // the id pg_stat_statements records them by (compat.h).
        if (query->commandType == CMD_UTILITY && tracker.level == 0)
            compat_untracked_utility_id(query->utilityStmt, &id);
        tracker.parsed(id);
    } else if (mode == kModeServer) {
        // Timed: what a top-level utility statement analyzes stays its own.
        if (!(server_timed && in_top_utility)) server_parsed(pstate, query);
        if (server_timed && parses_client_text(pstate)) timed_parsed(query);
    }
}

// A client's statement in timed server mode whose report needs repairing
// first (out of line, so the usual path below calls nothing but its tail
// call and needs no frame).
__attribute__((noinline)) static void post_parse_analyze_timed_repair(ParseState *pstate, Query *query) {
    server_parsed(pstate, query);
    timed_parsed(query);
}

// Timed server mode (server_timed_fast): the settings keep the mode, so
// only a client's statement matters here.
__attribute__((noinline)) static void post_parse_analyze_timed(ParseState *pstate, Query *query) {
    if (!parses_client_text(pstate) || in_top_utility) return;
    if (my_be->st_query_id != 0 || server_execute_published) return post_parse_analyze_timed_repair(pstate, query);
    timed_parsed(query);
}

// Server mode (server_fast): PostgreSQL reports this statement's id itself
// right after this hook, unless it still holds the previous statement's id
// (a query string's later statements on 15-17).
void post_parse_analyze(PSW_POST_PARSE_ANALYZE_PARAMS) {
    if (__builtin_expect(server_fast, 1)) {
        if (__builtin_expect(my_be->st_query_id == 0, 1)) return;
        return server_parsed(pstate, query);
    }
    if (server_timed_fast && pgstat_track_activities) return post_parse_analyze_timed(pstate, query);
    post_parse_analyze_slow(PSW_POST_PARSE_ANALYZE_ARGS);
}

// Each hook takes the tracker's fast path (top level, or nested without an
// id of its own: only the level moves) or saves and restores a frame.

static inline PlannedStmt *call_planner(PSW_PLANNER_PARAMS) { return next_planner(PSW_PLANNER_ARGS); }

__attribute__((noinline)) static PlannedStmt *planner_slow(PSW_PLANNER_PARAMS) {
    if (shared == nullptr) return call_planner(PSW_PLANNER_ARGS);
    if (!tracking()) {
        if (MyBEEntry != nullptr && MyBEEntry->st_query_id == 0) {
            note_no_server_id();
            server_claim(compat_queryid(parse->queryId));
        }
        if (server_timed) timed_phase(server_queryid());
        return call_planner(PSW_PLANNER_ARGS);
    }
    if (tracker.nested_phase_attributes()) {
        StatementFrame f = tracker.plan_begin(compat_queryid(parse->queryId));
        PlannedStmt *result = call_planner(PSW_PLANNER_ARGS);
        tracker.phase_end(f);
        return result;
    }
    if (tracker.level == 0)
        tracker.enter_top_plan(compat_queryid(parse->queryId));
    else
        tracker.enter();
    PlannedStmt *result = call_planner(PSW_PLANNER_ARGS);
    tracker.leave();
    return result;
}

// Server mode: planning in a Bind message (15-17: PostgreSQL has no id yet).
PlannedStmt *planner(PSW_PLANNER_PARAMS) {
    // Every exception leaves by a tail call, so the path taken per
    // statement saves no register.
    if (__builtin_expect(server_plain && my_be->st_query_id != 0, 1) || timed_current())
        return call_planner(PSW_PLANNER_ARGS);
    return planner_slow(PSW_PLANNER_ARGS);
}
}  // namespace psw
