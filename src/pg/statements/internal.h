// The statements feature's own state, shared by its files and by nobody
// else: the mode, the backend's slot, the hook chain, the tracker, and the
// inline tests the hooks make on every statement.
//
// Two modes per backend (docs/architecture.md, "two modes"):
//  - server (a client backend with track = top, the default): PostgreSQL's
//    own backend status entry already carries the top-level statement's
//    query id, state and start, and readers take them from there. The hooks
//    only repair, in PostgreSQL's entry, the few moments when it has no id
//    or an older one (a protocol Bind or Execute on 15-17, a cached utility
//    statement, the later statements of a multi-statement query string on
//    15-17) and mark in the slot a FETCH of a cursor and an EXECUTE
//    (recorded, as by pg_stat_statements, under the prepared statement's
//    id). A `SELECT 1` costs three hooks (parse analysis, planner,
//    ExecutorRun) that each load a flag and PostgreSQL's id and call on;
//    every exception leaves through a tail call to an out-of-line path.
//    With timing on the same hooks, ExecutorEnd and the transaction
//    callbacks also tell exact timing where statements begin and end
//    (analyze.cpp, executor.cpp, utility.cpp, transactions.cpp).
//  - tracker (track = all, track_activities off, and processes other than
//    client backends): the statement tracker (src/core/statement_tracker.h)
//    follows every phase and publishes into the backend's own slot.
// A backend changes mode only where no statement phase runs: at a top-level
// parse analysis of a client message, or when the main loop ends a
// transaction (mode.cpp).
//
// No PG_TRY in any hook: a setjmp per hook would cost more than the rest of
// the hook path. After an error the transaction callbacks reset the state;
// an error caught by PL/pgSQL is repaired by the subtransaction callbacks.
#pragma once

#include "statements.h"

#include "../shared_state.h"
#include "../../core/statement_tracker.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

enum TrackMode { kTrackTop = 0, kTrackAll = 1 };
extern int guc_track;  // pg_stat_waits.track

// ---- the hook chain (mode.cpp installs it) -----------------------------------
// What each hook calls on: the hook installed before ours, or else
// PostgreSQL's standard function. Chosen when ours is installed, so a hook
// passes a phase on with one indirect jump and no test.
extern post_parse_analyze_hook_type prev_post_parse_analyze;
extern planner_hook_type next_planner;
extern ExecutorStart_hook_type next_executor_start;
extern ExecutorRun_hook_type next_executor_run;
extern ExecutorFinish_hook_type next_executor_finish;
extern ExecutorEnd_hook_type next_executor_end;
extern ProcessUtility_hook_type next_process_utility;

// The hooks (analyze.cpp, executor.cpp, utility.cpp, transactions.cpp).
void post_parse_analyze(PSW_POST_PARSE_ANALYZE_PARAMS);
PlannedStmt *planner(PSW_PLANNER_PARAMS);
void executor_start(QueryDesc *qd, int eflags);
void executor_run(PSW_EXECUTOR_RUN_PARAMS);
void executor_finish(QueryDesc *qd);
void executor_end(QueryDesc *qd);
void process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                     ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                     DestReceiver *dest, QueryCompletion *qc);
void xact_callback(XactEvent event, void *);
void subxact_callback(SubXactEvent event, SubTransactionId, SubTransactionId, void *);

// ---- the backend's slot ------------------------------------------------------
extern BackendSlot *my_slot;
BackendSlot *find_slot();
// Every publish goes through here: one load once the slot is known.
static inline BackendSlot *slot() { return __builtin_expect(my_slot != nullptr, 1) ? my_slot : find_slot(); }

// What the backend's slot says it runs, written under its seqlock; source
// says who is the truth (SlotSource).
static inline void publish_slot(uint8_t source, uint8_t state, uint64 queryid, uint64 top_queryid,
                                TimestampTz query_start) {
    BackendSlot *s = slot();
    if (s == nullptr) return;
    s->pub.write([&](SlotData &d) {
        d.pid = MyProcPid;
        d.source = source;
        d.state = state;
        d.queryid = queryid;
        d.top_queryid = top_queryid;
        d.query_start = query_start;
    });
}

// Server mode's slot: PostgreSQL's entry is the truth; with `active`, the
// ids given win for the statement that started at query_start.
void publish_server(uint8_t state, uint64 queryid, uint64 top_queryid, TimestampTz query_start);
// An EXECUTE's slot entry names its prepared statement (server_utility)
// until the client's next statement.
extern bool server_execute_published;

// ---- mode (mode.cpp) -----------------------------------------------------------
enum HookMode : uint8 { kModeUndecided = 0, kModeServer = 1, kModeTracker = 2 };
extern uint8 mode;

// PostgreSQL's status entry of this backend, kept from when server mode
// began: MyBEEntry goes NULL at exit while the entry itself stays mapped.
extern volatile PgBackendStatus *my_be;

// What the hooks test, derived from the mode and the settings whenever one
// of them changes (update_server_fast()); no setting is copied.
// server_fast: what parse analysis tests: server mode, nothing asking for
// the tracker, no parse-analysis hook chained before ours, timing off.
// track_activities is not in it: with it off PostgreSQL reports no id, so
// the next planning, execution or utility statement takes its hook's slow
// path, which clears this flag, and the parse analysis after it settles the
// mode.
extern bool server_fast;
// What the planner and ExecutorRun hooks test: server mode without timing
// (with timing they also follow the statement: see timed server mode below).
extern bool server_plain;
// Timed server mode: server mode with timing on (see below).
extern bool server_timed;
// Parse analysis in timed server mode, when nothing else asks for the slow path.
extern bool server_timed_fast;
// What the transaction callback tests: server mode, nothing asking for the
// tracker (so no mode change is due at a transaction's end).
extern bool server_no_tracker;
void update_server_fast();

// Installed when first needed, then kept (another library may have chained
// behind them; they pass straight through when not needed).
void ensure_xact_callback();

static inline void note_no_server_id() {
    if (!pgstat_track_activities) server_fast = false;
}

// A process that runs a client's statements: a client backend, or a
// single-user backend (15 leaves its MyBackendType unset).
static inline bool client_backend() { return MyBackendType == B_BACKEND || !IsUnderPostmaster; }

// Whether this backend needs the tracker now. Server mode needs PostgreSQL
// to keep its status entry (track_activities) and a client backend's
// statement cycle; anything else (background workers running SQL, parallel
// workers, WAL senders) keeps the tracker.
static inline bool tracker_needed() {
    return guc_track == kTrackAll || !pgstat_track_activities || !client_backend() || MyBEEntry == nullptr;
}

void enter_tracker_mode();
void enter_server_mode();

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

// ---- exact timing --------------------------------------------------------------
// The registered timer (a no-op one until exact timing registers its own).
extern StatementTimer timer;

// ---- the tracker -----------------------------------------------------------------
// What the tracker needs from PostgreSQL and from exact timing.
struct HookEnv {
    void publish(const StatementIds &ids) {
        publish_slot(kSourceTracker, ids.state, ids.queryid, ids.top_queryid, ids.query_start);
    }
    int64_t statement_start_time() { return GetCurrentStatementStartTimestamp(); }
    bool track_all() { return guc_track == kTrackAll; }
    bool in_transaction_block() { return IsTransactionBlock(); }
    void timing_start(uint64_t queryid) { timer.start(queryid); }
    void timing_switch(uint64_t queryid) {
        if (timing_flags.open) timer.attribute(queryid);
    }
    // With no statement open, an ExecutorEnd at level 0 is a portal dropped
    // after its statement ended (tracker.client_wait()): its one call is
    // counted the way timed server mode counts it.
    void timing_call(uint64_t queryid) {
        if (timing_flags.open)
            timer.count_call(queryid);
        else
            timer.dropped_portal_call(queryid);
    }
    void timing_end() {
        if (timing_flags.open) timer.end();
    }
};
extern StatementTracker<HookEnv> tracker;

// ---- server mode: repairs of PostgreSQL's own report (analyze.cpp) ---------------

// PostgreSQL's id of this backend's statement (0 when it has none yet).
static inline uint64 server_queryid() { return MyBEEntry != nullptr ? compat_queryid(MyBEEntry->st_query_id) : 0; }
// A phase of a statement about to run with PostgreSQL's id still 0 (see analyze.cpp).
void server_claim(uint64 id);

// ---- timed server mode ---------------------------------------------------------------
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
// Timed server mode's open statement as PostgreSQL reports it (0: none,
// and always 0 outside server mode).
extern uint64 timed_pg_id;
extern bool in_top_utility;  // a top-level utility statement runs

// A top-level statement PostgreSQL reports as pg_id, timed under id (the
// prepared statement's for an EXECUTE; 0, not timed, for a PREPARE).
static inline void timed_begin(uint64 pg_id, uint64 id) {
    timed_pg_id = pg_id;
    timer.start(id);
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

// The open top-level statement finished executing (callers know one is
// open): inside a transaction block the backend is idle in transaction from
// here.
static inline void timed_execution_done() {
    if (IsTransactionBlock()) timer.end();
}

// The main loop ended the transaction or a client savepoint's (transactions.cpp).
void timed_over();

}  // namespace psw
#pragma GCC visibility pop
