// Which statement a backend is running, PostgreSQL-free (the hooks in
// src/pg/statements/ feed it; unit tests drive it directly).
//
// What it keeps right:
//  - A client's top-level statement keeps its ids and state `active` until
//    the server is done with it: the commit of an autocommit statement is
//    part of it (its WAL flush is charged to it), and transactions that run
//    *inside* a statement (CREATE INDEX CONCURRENTLY, VACUUM of several
//    tables, a procedure's COMMIT/ROLLBACK) do not end it. The hook layer
//    tells the two apart by whether a portal is running when the transaction
//    ends (PostgreSQL's ActivePortal): the main loop commits or aborts a
//    client statement's transaction only after its portal has stopped.
//  - Nested statements (`track = all`) get their own id for exactly the time
//    they run — planning, ExecutorStart/Run/Finish/End, nested utility
//    statements — and their parent's id back afterwards, also when a
//    PL/pgSQL exception block catches an error (the state saved when the
//    block's subtransaction started is restored when it aborts).
//  - Statement boundaries and id changes are reported to an Env, so exact
//    timing can charge every moment of a statement to the id that owns it
//    and count one call per execution.
//
// Env is a class with these members (the hook layer's are inline stores and
// calls; tests record them):
//   void publish(const StatementIds &);  // the ids/state changed
//   int64_t statement_start_time();      // query_start of a new statement
//   bool track_all();                    // pg_stat_waits.track = all
//   bool in_transaction_block();         // explicit BEGIN ... block
//   void timing_start(uint64_t queryid); // a top-level statement starts
//   void timing_switch(uint64_t queryid);// time from now on belongs to queryid
//   void timing_call(uint64_t queryid);  // one execution of queryid finished
//   void timing_end();                   // the top-level statement is over
#pragma once

#include <cstdint>

namespace psw {

// Also the states published in each backend's shared slot (shared_state.h).
enum StatementState : uint8_t {
    kStmtUnknown = 0,
    kStmtActive = 1,
    kStmtIdle = 2,
    kStmtIdleInXact = 3,
};

struct StatementIds {
    uint8_t state;
    uint64_t queryid;      // the statement being executed (nested under track = all)
    uint64_t top_queryid;  // the client's top-level statement
    int64_t query_start;
};

// What a hook saves before running one phase of a statement and gives back
// after it: the id and nesting level to restore.
struct StatementFrame {
    uint64_t saved_queryid;
    int32_t saved_level;
    bool attributed;  // this phase set its own (nested) id
};

template <typename Env>
class StatementTracker {
public:
    // Deepest subtransaction nesting whose state is restored after a caught
    // error; deeper ones heal when the enclosing phase returns.
    static constexpr int kMaxSubxactLevel = 256;

    Env env;
    StatementIds ids{kStmtUnknown, 0, 0, 0};
    int32_t level = 0;  // phases of statements currently running (0: between top-level phases)
    bool top_is_fetch = false;    // the top-level statement is FETCH/MOVE
    bool top_ends_block = false;  // the top-level statement is COMMIT/ROLLBACK/PREPARE TRANSACTION
    bool top_is_execute = false;  // the top-level statement is EXECUTE (runs under the prepared statement's id)
    bool top_fresh = false;       // parse-analyzed at top level, not yet executed

    uint64_t queryid() const { return ids.queryid; }
    uint64_t top_queryid() const { return ids.top_queryid; }
    // The top-level statement just parse-analyzed and not yet executed (0 if
    // none): the id of a utility statement whose PlannedStmt lost its id.
    uint64_t fresh_top_queryid() const { return top_fresh ? ids.top_queryid : 0; }

    // Forgets everything: the hook layer starts tracking here at a point
    // where no statement phase is running (docs/architecture.md, "two
    // modes"), so nothing saved before can be restored.
    void reset() {
        ids = StatementIds{kStmtUnknown, 0, 0, 0};
        level = 0;
        top_is_fetch = false;
        top_ends_block = false;
        top_is_execute = false;
        top_fresh = false;
    }

    // --- top level -------------------------------------------------------

    // Parse analysis at top level: a new client statement.
    void parsed(uint64_t id) {
        if (level != 0 || id == 0) return;
        start(id);
        top_fresh = true;
    }

    // --- fast paths (what a top-level statement and track = top take) -----
    // A phase that attributes nothing only runs one level deeper: the hook
    // calls one of these before it, then leave() after it. Nested phases
    // that attribute their own id take the *_begin/phase_end pairs below.

    // Whether a phase at the current level must save and restore ids.
    bool nested_phase_attributes() { return level > 0 && env.track_all(); }
    bool nested_run_attributes() { return level > 0 && (env.track_all() || (level == 1 && top_is_fetch)); }

    void enter_top_plan(uint64_t id) {  // level == 0
        if (id != 0) continue_top(id);
        level = 1;
    }
    void enter_top_executor_start(uint64_t id) {  // level == 0
        if (id != 0 && !top_is_fetch) continue_top(id);
        level = 1;
    }
    void enter_top_run(uint64_t id) {  // level == 0: the id stays afterwards
        if (id != 0) set_queryid(id);
        level = 1;
    }
    void enter() { level++; }
    void leave() { level--; }
    // ExecutorEnd at top level (or nested without attribution), after it ran.
    void executor_end_unattributed(uint64_t id) {
        if (level != 0) return;
        if (id != 0) env.timing_call(id);
        if (id == 0 || id == ids.top_queryid) top_execution_done();
    }

    // --- phases: planner, ExecutorStart/Run/Finish, ProcessUtility ---------
    // Each runs one level deeper, so statements started inside it (SQL
    // functions run while planning or pruning, PL/pgSQL bodies, utility
    // statements' own queries) are nested.

    StatementFrame plan_begin(uint64_t id) {
        StatementFrame f = frame();
        if (id != 0) {
            if (level == 0)
                continue_top(id);
            else
                attribute(id, &f);
        }
        level = f.saved_level + 1;
        return f;
    }

    StatementFrame executor_start_begin(uint64_t id) {
        StatementFrame f = frame();
        if (id != 0) {
            if (level == 0) {
                // Bind/Execute of a prepared statement has no parse analysis.
                if (!top_is_fetch) continue_top(id);
            } else {
                attribute(id, &f);
            }
        }
        level = f.saved_level + 1;
        return f;
    }

    // ExecutorRun and ExecutorFinish (AFTER triggers, FK checks). At top
    // level this is the running statement or a protocol portal being fetched,
    // whose id stays afterwards (the commit and idle-in-transaction time
    // belong to it). FETCH from a cursor runs the cursor's query one level
    // down, which is what it spends its time on.
    StatementFrame run_begin(uint64_t id) {
        StatementFrame f = frame();
        if (id != 0 && (level == 0 || env.track_all() || (level == 1 && top_is_fetch))) {
            set_queryid(id);
            f.attributed = level > 0;
        }
        level = f.saved_level + 1;
        return f;
    }

    // Restores what the phase saved (by assignment, so a level left high by
    // an error that a PL/pgSQL block caught further down is repaired here).
    void phase_end(const StatementFrame &f) {
        level = f.saved_level;
        if (f.attributed) set_queryid(f.saved_queryid);
    }

    // ExecutorEnd. Nested statements are attributed while they shut down and
    // count one call; at top level the call belongs to the portal's statement
    // (which may be an older one whose portal is dropped now).
    StatementFrame executor_end_begin(uint64_t id) {
        StatementFrame f = frame();
        if (id != 0 && level > 0) attribute(id, &f);
        return f;
    }

    void executor_end_done(const StatementFrame &f, uint64_t id) {
        if (f.saved_level == 0) {
            if (id != 0) env.timing_call(id);
            if (id == 0 || id == ids.top_queryid) top_execution_done();
        } else if (f.attributed) {
            env.timing_call(id);
            set_queryid(f.saved_queryid);
        }
    }

    // ProcessUtility. `id` is the statement's id (0 if unknown); an EXECUTE
    // runs under its prepared statement's id, which under track = all its
    // ExecutorEnd counts one level down (as pg_stat_statements counts it).
    StatementFrame utility_begin(uint64_t id, bool is_fetch, bool ends_block, bool is_execute) {
        StatementFrame f = frame();
        if (level == 0) {
            continue_top(id);
            top_is_fetch = is_fetch;
            top_ends_block = ends_block;
            top_is_execute = is_execute;
        } else if (id != 0) {
            attribute(id, &f);
        }
        level = f.saved_level + 1;
        return f;
    }

    void utility_end(const StatementFrame &f, uint64_t id) {
        level = f.saved_level;
        if (f.saved_level == 0) {
            if (ids.top_queryid != 0 && !(top_is_execute && env.track_all())) env.timing_call(ids.top_queryid);
            top_execution_done();
            top_is_fetch = false;
            top_is_execute = false;
        } else if (f.attributed) {
            env.timing_call(id);
            set_queryid(f.saved_queryid);
        }
    }

    // --- transactions --------------------------------------------------------

    // A (top-level) transaction committed, prepared or aborted. in_portal: a
    // portal was running, so the transaction was one of the statement's own
    // and the statement goes on. Otherwise the statement is over: idle, or
    // idle in an aborted transaction block after an error.
    void transaction_end(bool aborted, bool in_portal, bool in_block) {
        if (in_portal) return;
        bool aborted_in_block = aborted && !top_ends_block && in_block;
        statement_over(aborted_in_block ? kStmtIdleInXact : kStmtIdle);
    }

    // A subtransaction started at nesting `xact_level` (2 for the first):
    // remember whose it is, for a caught error.
    void subtransaction_start(int xact_level) {
        if (xact_level < 0 || xact_level >= kMaxSubxactLevel) return;
        saved_[xact_level] = SavedState{ids.queryid, level};
    }

    // A subtransaction aborted. If an error was caught below the main loop
    // (a PL/pgSQL exception block, in a running portal or in a function
    // folded while planning): back to the state its block started in.
    // Otherwise the error reached the main loop inside a client savepoint,
    // or a client's ROLLBACK TO ended it: the statement is over.
    void subtransaction_abort(int xact_level, bool caught) {
        if (!caught) {
            statement_over(kStmtIdleInXact);
            return;
        }
        if (xact_level < 0 || xact_level >= kMaxSubxactLevel) return;
        level = saved_[xact_level].level;
        set_queryid(saved_[xact_level].queryid);
    }

    // The backend waits for its client with no portal running (a Sync's
    // ReadyForQuery, or a pipeline read dry). Inside a block an
    // extended-protocol statement's execution is over by then although its
    // portal waits for the next Bind: it ends here, keeping its ids as
    // top_execution_done() does, so the client's think time is never its.
    // The portal's ExecutorEnd later counts its call (a late call).
    void client_wait() {
        if (level == 0 && ids.state == kStmtActive && !top_ends_block && env.in_transaction_block()) {
            ids.state = kStmtIdleInXact;
            env.publish(ids);
            env.timing_end();
        }
    }

private:
    struct SavedState {
        uint64_t queryid;
        int32_t level;
    };
    SavedState saved_[kMaxSubxactLevel] = {};

    StatementFrame frame() const { return StatementFrame{ids.queryid, level, false}; }

    void start(uint64_t id) {
        ids.state = kStmtActive;
        ids.top_queryid = id;
        ids.queryid = id;
        ids.query_start = env.statement_start_time();
        top_is_fetch = false;
        top_ends_block = false;
        top_is_execute = false;
        top_fresh = false;
        env.publish(ids);
        env.timing_start(id);
    }

    // The same statement goes on (planning or executing what was just
    // parsed); anything else starts a new one.
    void continue_top(uint64_t id) {
        if (ids.state != kStmtActive || ids.top_queryid != id) start(id);
    }

    void attribute(uint64_t id, StatementFrame *f) {
        if (!env.track_all()) return;
        set_queryid(id);
        f->attributed = true;
    }

    void set_queryid(uint64_t id) {
        if (ids.queryid == id) return;
        ids.queryid = id;
        env.publish(ids);
        env.timing_switch(id);
    }

    // The top-level statement's execution finished. Inside an explicit
    // transaction block the backend is now idle in transaction and keeps the
    // statement's ids; otherwise it stays active until its commit.
    void top_execution_done() {
        top_fresh = false;
        if (!top_ends_block && ids.state == kStmtActive && env.in_transaction_block()) {
            ids.state = kStmtIdleInXact;
            env.publish(ids);
            env.timing_end();
        }
    }

    // Ids cleared, so idle time is never charged to the last statement.
    void statement_over(uint8_t state) {
        ids.state = state;
        ids.queryid = 0;
        ids.top_queryid = 0;
        level = 0;  // an error unwound every hook frame
        top_is_fetch = false;
        top_ends_block = false;
        top_is_execute = false;
        top_fresh = false;
        env.publish(ids);
        env.timing_end();
    }
};

}  // namespace psw
