// Executor, planner, parse-analysis and utility hooks, and the transaction
// callbacks, that say which statement a backend runs (docs/architecture.md,
// "Statement attribution").
//
// Two modes per backend (docs/architecture.md, "two modes"):
//  - server (a client backend with track = top, the default): PostgreSQL's
//    own backend status entry already carries the
//    top-level statement's query id, state and start, and readers take them
//    from there. The hooks only repair, in PostgreSQL's entry, the few
//    moments when it has no id or an older one (a protocol Bind or Execute
//    on 15-17, a cached utility statement, the later statements of a
//    multi-statement query string on 15-17) and mark in the slot a FETCH of
//    a cursor and an EXECUTE (recorded, as by pg_stat_statements, under the
//    prepared statement's id). A `SELECT 1` costs three hooks (parse analysis, planner,
//    ExecutorRun) that each load a flag and PostgreSQL's id and call on;
//    every exception leaves through a tail call to an out-of-line path.
//    With timing on the same hooks, ExecutorEnd and the transaction
//    callbacks also tell exact timing where statements begin and end
//    ("timed server mode" below).
//  - tracker (track = all, track_activities off, and processes other than
//    client backends): the statement tracker (src/core/statement_tracker.h) follows
//    every phase and publishes into the backend's own slot, as below.
// A backend changes mode only where no statement phase runs: at a top-level
// parse analysis of a client message, or when the main loop ends a
// transaction. The settings are SUSET and change at any time (SET, a
// function's SET clause, a reload); until the next such point the backend
// stays in its mode. The hooks and callbacks only the tracker needs
// (ExecutorStart/Finish, and ExecutorEnd and the subtransaction callback,
// which timing needs too) are installed in a backend the first time it
// enters tracker mode or timing is turned on, and the transaction callback
// when a setting first asks for the tracker or timing, so a backend that
// never times pays nothing for them; once installed they stay (another
// library may have chained behind them) and pass straight through when
// not needed.
//
// Why so many hooks in tracker mode: an id must cover a statement's whole
// life — planning (planner hook; Bind plans before ExecutorStart),
// execution, ExecutorFinish (AFTER triggers, FK checks), each fetch of a
// protocol portal (ExecutorRun at level 0), transactions the statement runs
// inside itself, and the commit that ends an autocommit statement. A slot
// write is a few plain stores under a seqlock: no lock, syscall or
// allocation on this path.
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
// What each of the other hooks calls on: the hook installed before ours, or
// else PostgreSQL's standard function. Chosen when ours is installed, so a
// hook passes a phase on with one indirect jump and no test.
static planner_hook_type next_planner = standard_planner;
static ExecutorStart_hook_type next_executor_start = standard_ExecutorStart;
static ExecutorRun_hook_type next_executor_run = standard_ExecutorRun;
static ExecutorFinish_hook_type next_executor_finish = standard_ExecutorFinish;
static ExecutorEnd_hook_type next_executor_end = standard_ExecutorEnd;
static ProcessUtility_hook_type next_process_utility = standard_ProcessUtility;

// The function ours passes on to: `hook`, the one installed before ours, if
// any, else PostgreSQL's `standard`.
template <typename F>
static inline F chain_to(F hook, F standard) {
    return hook != nullptr ? hook : standard;
}

static BackendSlot *my_slot = nullptr;

// An EXECUTE's slot entry names its prepared statement (server_utility)
// until the client's next statement.
static bool server_execute_published = false;

__attribute__((noinline)) static BackendSlot *find_slot() {
    if (shared != nullptr && MyProc != nullptr) {
        int procno = compat_my_procno();
        if (procno < 0 || static_cast<uint32>(procno) >= shared->num_slots) return nullptr;
        my_slot = &shared->slots[procno];
    }
    return my_slot;
}

// Every publish goes through here: one load once the slot is known.
static inline BackendSlot *slot() { return __builtin_expect(my_slot != nullptr, 1) ? my_slot : find_slot(); }

// --- mode -------------------------------------------------------------------

enum HookMode : uint8 { kModeUndecided = 0, kModeServer = 1, kModeTracker = 2 };
static uint8 mode = kModeUndecided;

// What this backend's settings ask for, kept by the GUC assign hooks (which
// see the new value before PostgreSQL stores it).
static bool wants_timing = false;
static bool wants_track_all = false;
static bool wants_tracker = false;  // the settings need the tracker: track = all

// PostgreSQL's status entry of this backend, kept from when server mode
// began: MyBEEntry goes NULL at exit while the entry itself stays mapped.
static volatile PgBackendStatus *my_be = nullptr;

// The one flag parse analysis tests: server mode, nothing asking for the
// tracker, no parse-analysis hook chained before ours. track_activities is
// not in it: with it off PostgreSQL reports no id, so the next planning,
// execution or utility statement takes its hook's slow path, which clears
// this flag, and the parse analysis after it settles the mode.
static bool server_fast = false;
// What the planner and ExecutorRun hooks test: server mode without timing
// (with timing they also follow the statement, see "timed server mode").
static bool server_plain = false;
// Parse analysis in timed server mode, when nothing else asks for the slow path.
static bool server_timed_fast = false;
// What the transaction callback tests: server mode, nothing asking for the
// tracker (so no mode change is due at a transaction's end).
static bool server_no_tracker = false;
static void update_server_fast() {
    bool server_only = mode == kModeServer && !wants_tracker && prev_post_parse_analyze == nullptr &&
                       !timing_flags.log_pending;
    server_fast = server_only && !wants_timing;
    server_timed_fast = server_only && wants_timing;
    server_plain = mode == kModeServer && !wants_timing;
    server_no_tracker = mode == kModeServer && !wants_tracker;
}
static void note_no_server_id() {
    if (!pgstat_track_activities) server_fast = false;
}

static bool tracker_hooks_installed = false;
// Timed server mode's open statement as PostgreSQL reports it (0: none,
// and always 0 outside server mode).
static uint64 timed_pg_id = 0;
static bool xact_callback_registered = false;

static void xact_callback(XactEvent event, void *);
static void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void *);
static void executor_start(QueryDesc *qd, int eflags);
static void executor_finish(QueryDesc *qd);
static void executor_end(QueryDesc *qd);

static void ensure_xact_callback() {
    if (xact_callback_registered) return;
    xact_callback_registered = true;
    RegisterXactCallback(xact_callback, nullptr);
}

// ExecutorEnd and the subtransaction callback: the tracker's, and timed
// server mode's (calls, and a statement's end inside a block).
static bool end_hooks_installed = false;
static void ensure_end_hooks() {
    if (end_hooks_installed) return;
    end_hooks_installed = true;
    next_executor_end = chain_to(ExecutorEnd_hook, standard_ExecutorEnd);
    ExecutorEnd_hook = executor_end;
    RegisterSubXactCallback(subxact_callback, nullptr);
}

static void ensure_timed_hooks() {
    ensure_end_hooks();
    ensure_xact_callback();
}

// A process that runs a client's statements: a client backend, or a
// single-user backend (15 leaves its MyBackendType unset).
static inline bool client_backend() { return MyBackendType == B_BACKEND || !IsUnderPostmaster; }

// Whether this backend needs the tracker now. Server mode needs PostgreSQL
// to keep its status entry (track_activities) and a client backend's
// statement cycle; anything else (background workers running SQL, parallel
// workers, WAL senders) keeps the tracker as before.
static bool tracker_needed() {
    return wants_tracker || !pgstat_track_activities || !client_backend() || MyBEEntry == nullptr;
}

// What the tracker needs from PostgreSQL and from exact timing.
struct HookEnv {
    void publish(const StatementIds &ids) {
        BackendSlot *s = slot();
        if (s == nullptr) return;
        s->pub.write([&](SlotData &d) {
            d.pid = MyProcPid;
            d.source = kSourceTracker;
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
        if (timing_flags.open) timing_attribute(queryid);
    }
    // With no statement open, an ExecutorEnd at level 0 is a portal dropped
    // after its statement ended (tracker.client_wait()): its one call is
    // counted the way timed server mode counts it.
    void timing_call(uint64_t queryid) {
        if (timing_flags.open)
            timing_count_call(queryid);
        else
            timing_dropped_portal_call(queryid);
    }
    void timing_end() {
        if (timing_flags.open) timing_statement_end();
    }
};

static StatementTracker<HookEnv> tracker;

unsigned long long current_queryid() {
    if (mode == kModeTracker) return tracker.queryid();
    return MyBEEntry != nullptr ? compat_queryid(MyBEEntry->st_query_id) : 0;
}

// Server mode's slot: PostgreSQL's entry is the truth; with `active`, the
// ids given win for the statement that started at query_start.
static void publish_server(uint8_t state, uint64 queryid, uint64 top_queryid, TimestampTz query_start) {
    BackendSlot *s = slot();
    if (s == nullptr) return;
    s->pub.write([&](SlotData &d) {
        d.pid = MyProcPid;
        d.source = kSourceServer;
        d.state = state;
        d.queryid = queryid;
        d.top_queryid = top_queryid;
        d.query_start = query_start;
    });
}

__attribute__((noinline)) static void enter_tracker_mode() {
    if (!tracker_hooks_installed) {
        tracker_hooks_installed = true;
        next_executor_start = chain_to(ExecutorStart_hook, standard_ExecutorStart);
        ExecutorStart_hook = executor_start;
        next_executor_finish = chain_to(ExecutorFinish_hook, standard_ExecutorFinish);
        ExecutorFinish_hook = executor_finish;
        ensure_end_hooks();
        ensure_xact_callback();
    }
    tracker.reset();
    timed_pg_id = 0;
    mode = kModeTracker;
    update_server_fast();
}

__attribute__((noinline)) static void enter_server_mode() {
    if (mode == kModeTracker) tracker.env.timing_end();
    tracker.reset();
    my_be = MyBEEntry;
    mode = kModeServer;
    update_server_fast();
    publish_server(kStmtUnknown, 0, 0, 0);
    server_execute_published = false;
}

// At a point where no statement phase runs: take the mode the settings ask for.
static inline void settle_mode() {
    uint8 target = tracker_needed() ? kModeTracker : kModeServer;
    if (__builtin_expect(target == mode, 1)) return;
    if (target == kModeTracker)
        enter_tracker_mode();
    else
        enter_server_mode();
}

// First hook of a process, anywhere: a process that is not a client
// backend tracks from here (no phase of ours is open yet); a client
// backend decides at its first top-level parse analysis.
static inline bool tracking() {
    if (__builtin_expect(mode == kModeUndecided, 0) && shared != nullptr && !client_backend()) enter_tracker_mode();
    return mode == kModeTracker;
}

void query_hooks_assign_timing(bool on) {
    wants_timing = on;
    update_server_fast();
    if (on) ensure_timed_hooks();
}

void query_hooks_assign_track(int track) {
    wants_track_all = track == kTrackAll;
    wants_tracker = wants_track_all;
    update_server_fast();
    if (wants_track_all) ensure_xact_callback();
}

// --- server mode: repairs of PostgreSQL's own report ------------------------------

// PostgreSQL's id of this backend's statement (0 when it has none yet).
static inline uint64 server_queryid() { return MyBEEntry != nullptr ? compat_queryid(MyBEEntry->st_query_id) : 0; }

// A phase of a statement about to run with PostgreSQL's id still 0: a Bind
// (planning) or Execute message, which reset the id and (15-17) report none
// of their own; whatever runs first belongs to the client's statement.
// The hooks test for it inline and call this only then.
__attribute__((noinline, cold)) static void server_claim(uint64 id) {
    if (id != 0) compat_report_query_id(id, false);
}

// --- timed server mode ------------------------------------------------------------
// A client backend under track = top with timing on stays in server mode.
// PostgreSQL reports a query id only for the top-level statement, so its
// entry says which statement the time belongs to, and nested statements
// never change it. What the tracker learns from its nesting level, this
// mode takes from PostgreSQL instead:
//  - a statement begins at a client's top-level parse analysis, or at a
//    planning or execution that finds PostgreSQL reporting another id than
//    the open statement's (Bind and Execute of a prepared statement);
//  - an execution ends at a top-level ExecutorEnd, one call: outside a
//    top-level utility statement, either inside the running portal and in
//    its own text (a nested statement's text is its function's), or with no
//    portal running for the open statement's own id or for the statement
//    it followed (a portal dropped after the run: at commit, or at the next
//    statement's Bind; a statement of a function run during planning or by a
//    deferred trigger has its own id).
//    The destination such a dropped portal last sent to is freed by then
//    (exec_simple_query and exec_execute_message destroy their receiver
//    first), so it is never looked at. A top-level utility statement's end
//    is one call too;
//  - the statement ends with its transaction in the main loop (its commit
//    included), inside a transaction block when its execution ends or the
//    backend waits for the client, or with an error in a client's savepoint.
// Per SELECT 1 that is the three hooks server mode has anyway, ExecutorEnd
// and the commit, instead of the tracker's seven entry points.
static bool in_top_utility = false;  // a top-level utility statement runs

static inline bool timed_server() { return mode == kModeServer && wants_timing; }

// A top-level statement PostgreSQL reports as pg_id, timed under id (the
// prepared statement's for an EXECUTE; 0, not timed, for a PREPARE).
static void timed_begin(uint64 pg_id, uint64 id) {
    timed_pg_id = pg_id;
    timing_statement_start(id);
}

// Whether a phase PostgreSQL reports as pg_id belongs to a statement other
// than the open one.
static inline bool timed_new(uint64 pg_id) { return pg_id != 0 && (!timing_flags.open || pg_id != timed_pg_id); }

// A phase of the statement PostgreSQL reports as pg_id.
static inline void timed_phase(uint64 pg_id) {
    if (timed_new(pg_id)) timed_begin(pg_id, pg_id);
}

// What the planner and ExecutorRun hooks test first in timed server mode:
// PostgreSQL still reports the open statement, nothing to do.
static inline bool timed_current() {
    return timed_pg_id != 0 && compat_queryid(my_be->st_query_id) == timed_pg_id && timing_flags.open;
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

// The open top-level statement finished executing (callers know one is
// open): inside a transaction block the backend is idle in transaction from
// here.
static inline void timed_execution_done() {
    if (IsTransactionBlock()) timing_statement_end();
}

// Tracker mode's part of query_hooks_client_read() below: a block's
// statement ends there too (StatementTracker::client_wait()).
__attribute__((noinline, cold)) static void tracker_client_wait() {
    if (ActivePortal == nullptr && my_slot != nullptr) tracker.client_wait();
}

// Waiting for the client with no portal running: whatever the open statement
// was doing is done. Inside a transaction block an extended-protocol
// statement's execution has ended by now, yet its portal is dropped only at
// the next Bind or at commit: ending it here keeps the client's think time
// out of it. (A portal suspended at an Execute's row limit ends here too;
// the next Execute resumes it as a new stretch of the same id, and its one
// call comes when the portal is dropped.)
void query_hooks_client_read() {
    if (mode != kModeServer) {
        if (mode == kModeTracker) tracker_client_wait();
        return;
    }
    if (!wants_timing || ActivePortal != nullptr) return;
    in_top_utility = false;
    timing_statement_end();
}

// Sending to the client between messages (no message's text, no portal
// running) inside a transaction block: the ReadyForQuery of a Sync, so the
// block's extended-protocol statement is over, although its portal waits
// for the next Bind. A pipelining client's next message may already be
// there, and then the backend never waits for the client in between. (An
// autocommit statement's commit may send a deferred trigger's notice from
// the same place: not in a block, and its statement goes on.)
void query_hooks_client_send() {
    if (debug_query_string == nullptr && IsTransactionBlock()) query_hooks_client_read();
}

// The main loop ended the transaction or a client savepoint's: every phase
// is over (an error may have skipped the flags' resets).
static void timed_over() {
    in_top_utility = false;
    timing_statement_end();  // (which tests for an open statement itself)
}

// --- hooks ----------------------------------------------------------------

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
        executions_write_log();
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

__attribute__((noinline)) static void post_parse_analyze_slow(ParseState *pstate, Query *query,
                                                              PSW_JUMBLE_STATE *jstate) {
    if (prev_post_parse_analyze) prev_post_parse_analyze(pstate, query, jstate);
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
        if (!(wants_timing && in_top_utility)) server_parsed(pstate, query);
        if (wants_timing && parses_client_text(pstate)) timed_parsed(query);
    }
}

// Timed server mode (server_timed_fast): the settings keep the mode, so
// only a client's statement matters here.
__attribute__((noinline)) static void post_parse_analyze_timed(ParseState *pstate, Query *query) {
    if (!parses_client_text(pstate) || in_top_utility) return;
    if (my_be->st_query_id != 0 || server_execute_published) server_parsed(pstate, query);
    timed_parsed(query);
}

// Server mode (server_fast): PostgreSQL reports this statement's id itself
// right after this hook, unless it still holds the previous statement's id
// (a query string's later statements on 15-17).
static void post_parse_analyze(ParseState *pstate, Query *query, PSW_JUMBLE_STATE *jstate) {
    if (__builtin_expect(server_fast, 1)) {
        if (__builtin_expect(my_be->st_query_id == 0, 1)) return;
        return server_parsed(pstate, query);
    }
    if (server_timed_fast && pgstat_track_activities) return post_parse_analyze_timed(pstate, query);
    post_parse_analyze_slow(pstate, query, jstate);
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
        if (timed_server()) timed_phase(server_queryid());
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
static PlannedStmt *planner(PSW_PLANNER_PARAMS) {
    // Every exception leaves by a tail call, so the path taken per
    // statement saves no register.
    if (__builtin_expect(server_plain && my_be->st_query_id != 0, 1) || timed_current())
        return call_planner(PSW_PLANNER_ARGS);
    return planner_slow(PSW_PLANNER_ARGS);
}

static inline void call_executor_start(QueryDesc *qd, int eflags) {
    next_executor_start(qd, eflags);
}

// Installed with the tracker (server mode: standard_ExecutorStart reports
// the id itself).
static void executor_start(QueryDesc *qd, int eflags) {
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
        if (timed_server()) timed_phase(server_queryid());
        return call_executor_run(PSW_EXECUTOR_RUN_ARGS);
    }
    run_phase(qd, [&]() { call_executor_run(PSW_EXECUTOR_RUN_ARGS); });
}

// Server mode: a protocol Execute of a portal started at Bind (15-17:
// PostgreSQL has no id for it).
static void executor_run(PSW_EXECUTOR_RUN_PARAMS) {
    if (__builtin_expect(server_plain && my_be->st_query_id != 0, 1) || timed_current())
        return call_executor_run(PSW_EXECUTOR_RUN_ARGS);
    executor_run_slow(PSW_EXECUTOR_RUN_ARGS);
}

static inline void call_executor_finish(QueryDesc *qd) {
    next_executor_finish(qd);
}

// Installed with the tracker.
static void executor_finish(QueryDesc *qd) {
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
        timing_statement_end();
    else
        timing_statement_end_late();
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
        if (timing_dropped_portal_call(id) && IsTransactionBlock()) dropped_portal_statement_end(qd->sourceText);
    } else if (timing_flags.open && qd->sourceText == portal->sourceText && timing_top_call(id)) {
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
static void executor_end(QueryDesc *qd) {
    if (__builtin_expect(mode == kModeServer && wants_timing, 1)) return timed_executor_end(qd);
    executor_end_other(qd);
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
    if (!top || !timed_server()) {
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
    if (cursor_time) timing_attribute(cursor);
    in_top_utility = true;
    call_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    in_top_utility = false;
    if (cursor_time && timing_flags.open) {
        if (cursor_first_run && cursor_qd->already_executed) timing_count_call(cursor);
        timing_attribute(0);
    }
    if (fetch) publish_server(kStmtUnknown, 0, 0, 0);
    if (timing_flags.open) {
        timing_top_call(timing_statement_id());
        if (!ends_transaction_block(stmt)) timed_execution_done();
    }
}

static void process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
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

// A transaction ended. The main loop commits or aborts a client statement's
// transaction only after its portal has stopped; a transaction that ends
// while a portal runs belongs to the running statement (CREATE INDEX
// CONCURRENTLY, VACUUM, a procedure's COMMIT/ROLLBACK), which goes on.
// Registered when the tracker is first asked for; the end of a client
// statement is also where a backend changes mode.
__attribute__((noinline)) static void xact_callback_slow(bool aborted) {
    if (!shared) return;
    const bool in_portal = ActivePortal != nullptr;
    if (mode == kModeTracker && my_slot != nullptr)
        tracker.transaction_end(aborted, in_portal, aborted && !in_portal && IsTransactionBlock());
    else if (mode == kModeServer && !in_portal)
        timed_over();
    // A client backend between statements: no phase runs. Tracker mode with
    // a setting still asking for it (every timed statement) stops here.
    // So does server mode while nothing asks for the tracker (client
    // backends only reach server mode; their status entry stays).
    if (in_portal || (mode == kModeTracker && wants_tracker) ||
        (mode == kModeServer && !wants_tracker && pgstat_track_activities))
        return;
    bool change = mode == kModeTracker ? !tracker_needed() : mode == kModeServer && tracker_needed();
    if (change && client_backend()) {
        settle_mode();
        if (mode == kModeTracker) {
            // Idle (or idle in an aborted block) until the next statement.
            bool aborted_block = aborted && IsTransactionBlock();
            tracker.transaction_end(aborted, false, aborted_block);
        }
    }
}

// A transaction the main loop ended, in server mode with nothing asking for
// the tracker (so no mode change is due): it ends the timed statement.
static inline bool ends_server_statement() {
    return server_no_tracker && ActivePortal == nullptr && pgstat_track_activities;
}

// The path every timed statement takes (timed server mode: an autocommit
// statement's commit) is tested first and ends in a tail call; everything
// else, and the mode change, is out of line.
static void xact_callback(XactEvent event, void *) {
    if (__builtin_expect(event == XACT_EVENT_COMMIT, 1) && ends_server_statement()) return timed_over();
    bool aborted;
    switch (event) {
        case XACT_EVENT_COMMIT:
        case XACT_EVENT_PARALLEL_COMMIT:
        case XACT_EVENT_PREPARE:
        case XACT_EVENT_PARALLEL_ABORT:
            aborted = false;
            break;
        case XACT_EVENT_ABORT:
            aborted = true;
            break;
        default:
            return;  // the PRE_ events: nothing ends there
    }
    if (ends_server_statement()) return timed_over();
    xact_callback_slow(aborted);
}

// A PL/pgSQL exception block runs in a subtransaction; the main loop aborts
// a client savepoint's subtransaction with no portal active, after it has
// cleared debug_query_string (PostgresMain's error recovery, every major).
// No portal is active either while a statement is planned, where a caught
// error in a function folded to a constant aborts a subtransaction too, the
// statement's text still current. Installed with the tracker or with timing.
static void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void *) {
    if (!shared) return;
    if (mode == kModeServer) {
        // Timed server mode: an error in a client's savepoint ended the statement.
        if (event == SUBXACT_EVENT_ABORT_SUB && ActivePortal == nullptr && debug_query_string == nullptr)
            timed_over();
        return;
    }
    if (mode != kModeTracker) return;
    if (event == SUBXACT_EVENT_START_SUB) {
        tracker.subtransaction_start(GetCurrentTransactionNestLevel());
    } else if (event == SUBXACT_EVENT_ABORT_SUB && my_slot != nullptr) {
        // Caught inside a portal, or inside a statement's planning (a phase
        // open, the text current); a client's ROLLBACK TO runs at level 0.
        bool caught = ActivePortal != nullptr || (debug_query_string != nullptr && tracker.level > 0);
        tracker.subtransaction_abort(GetCurrentTransactionNestLevel(), caught);
    }
}

// At preload: what every mode needs. The tracker's own hooks come with
// enter_tracker_mode().
void install_query_hooks() {
    prev_post_parse_analyze = post_parse_analyze_hook;
    post_parse_analyze_hook = post_parse_analyze;
    next_planner = chain_to(planner_hook, standard_planner);
    planner_hook = planner;
    next_executor_run = chain_to(ExecutorRun_hook, standard_ExecutorRun);
    ExecutorRun_hook = executor_run;
    next_process_utility = chain_to(ProcessUtility_hook, standard_ProcessUtility);
    ProcessUtility_hook = process_utility;
}

}  // namespace psw
