// The statement tracker driven as the hooks drive it, in the orders
// PostgreSQL's main loop, SPI, PL/pgSQL and multi-transaction utility
// statements produce.
#include "statement_tracker.h"
#include "statement_ledger.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace psw;

struct RecordingEnv {
    std::vector<StatementIds> published;
    std::vector<std::string> timing;
    bool all = false;
    bool block = false;
    int64_t clock = 100;

    void publish(const StatementIds &ids) { published.push_back(ids); }
    int64_t statement_start_time() { return clock; }
    bool track_all() { return all; }
    bool in_transaction_block() { return block; }
    void timing_start(uint64_t q) { timing.push_back("start " + std::to_string(q)); }
    void timing_switch(uint64_t q) { timing.push_back("switch " + std::to_string(q)); }
    void timing_call(uint64_t q) { timing.push_back("call " + std::to_string(q)); }
    void timing_end() { timing.push_back("end"); }
};

using Tracker = StatementTracker<RecordingEnv>;

// One top-level SELECT as exec_simple_query runs it, up to its commit.
void simple_select(Tracker &t, uint64_t id) {
    t.parsed(id);
    t.phase_end(t.plan_begin(id));
    t.phase_end(t.executor_start_begin(id));
    t.phase_end(t.run_begin(id));
    t.phase_end(t.run_begin(id));  // ExecutorFinish
    t.executor_end_done(t.executor_end_begin(id), id);
}

TEST(StatementTracker, AutocommitSelectStaysActiveThroughItsCommit) {
    Tracker t;
    simple_select(t, 11);
    EXPECT_EQ(t.ids.state, kStmtActive);
    EXPECT_EQ(t.queryid(), 11u);
    EXPECT_EQ(t.top_queryid(), 11u);
    t.transaction_end(false, /*caught=*/false, false);
    EXPECT_EQ(t.ids.state, kStmtIdle);
    EXPECT_EQ(t.queryid(), 0u);
    EXPECT_EQ(t.top_queryid(), 0u);
    EXPECT_EQ(t.env.timing, (std::vector<std::string>{"start 11", "call 11", "end"}));
    EXPECT_EQ(t.level, 0);
}

// The hook layer starts the tracker afresh when a backend enters tracker
// mode between statements: nothing of an earlier run may leak into the next
// statement (a stale level would make its parse analysis look nested).
TEST(StatementTracker, ResetStartsAfreshBetweenStatements) {
    Tracker t;
    t.parsed(5);
    t.plan_begin(5);  // a phase left open: its frame is never closed
    ASSERT_EQ(t.level, 1);
    t.reset();
    EXPECT_EQ(t.level, 0);
    EXPECT_EQ(t.ids.state, kStmtUnknown);
    EXPECT_EQ(t.queryid(), 0u);
    EXPECT_EQ(t.fresh_top_queryid(), 0u);
    simple_select(t, 12);
    EXPECT_EQ(t.ids.state, kStmtActive);
    EXPECT_EQ(t.top_queryid(), 12u);
    EXPECT_EQ(t.level, 0);
}

TEST(StatementTracker, TransactionsInsideARunningStatementDoNotEndIt) {
    Tracker t;
    // CREATE INDEX CONCURRENTLY: commits and starts transactions while its
    // portal runs, then waits for old snapshots.
    t.parsed(42);
    StatementFrame f = t.utility_begin(42, false, false, false);
    t.transaction_end(false, /*caught=*/true, false);
    t.transaction_end(false, true, false);
    EXPECT_EQ(t.ids.state, kStmtActive);
    EXPECT_EQ(t.queryid(), 42u);
    EXPECT_EQ(t.top_queryid(), 42u);
    EXPECT_EQ(t.level, 1);
    t.utility_end(f, 42);
    t.transaction_end(false, false, false);
    EXPECT_EQ(t.ids.state, kStmtIdle);
    EXPECT_EQ(t.env.timing, (std::vector<std::string>{"start 42", "call 42", "end"}));
}

// CALL p() where p sleeps, COMMITs, and sleeps again (SPI statements one
// level down).
void procedure_with_commit(Tracker &t, uint64_t call, uint64_t inner) {
    t.parsed(call);
    StatementFrame u = t.utility_begin(call, false, false, false);
    for (int i = 0; i < 2; i++) {
        t.parsed(inner);  // SPI parse analysis at level 1: not a new top-level statement
        t.phase_end(t.plan_begin(inner));
        t.phase_end(t.executor_start_begin(inner));
        StatementFrame r = t.run_begin(inner);
        EXPECT_EQ(t.top_queryid(), call) << "run " << i;
        EXPECT_EQ(t.queryid(), t.env.all ? inner : call) << "run " << i;
        t.phase_end(r);
        t.phase_end(t.run_begin(inner));
        t.executor_end_done(t.executor_end_begin(inner), inner);
        EXPECT_EQ(t.queryid(), call);
        if (i == 0) t.transaction_end(false, /*caught=*/true, false);  // COMMIT inside the procedure
    }
    t.utility_end(u, call);
    EXPECT_EQ(t.ids.state, kStmtActive);
    t.transaction_end(false, false, false);
}

TEST(StatementTracker, ProcedureThatCommitsKeepsTheCallTrackTop) {
    Tracker t;
    procedure_with_commit(t, 7, 8);
    EXPECT_EQ(t.env.timing, (std::vector<std::string>{"start 7", "call 7", "end"}));
}

TEST(StatementTracker, ProcedureThatCommitsNestsExactlyTrackAll) {
    Tracker t;
    t.env.all = true;
    procedure_with_commit(t, 7, 8);
    // Every nested phase charges the nested id and gives the time back.
    int calls8 = 0, calls7 = 0, switches = 0;
    for (const auto &e : t.env.timing) {
        calls8 += e == "call 8";
        calls7 += e == "call 7";
        switches += e.rfind("switch", 0) == 0;
    }
    EXPECT_EQ(calls8, 2);
    EXPECT_EQ(calls7, 1);
    EXPECT_EQ(switches % 2, 0);
    EXPECT_EQ(t.env.timing.back(), "end");
}

// EXECUTE runs under its prepared statement's id (as pg_stat_statements
// records it) and counts one call per execution, whether the prepared
// statement's own ExecutorEnd counts it (track = all) or the EXECUTE does.
void execute_prepared(Tracker &t, uint64_t prepared) {
    t.parsed(prepared);  // the hooks map EXECUTE's parse analysis to the prepared id
    StatementFrame u = t.utility_begin(prepared, false, false, /*is_execute=*/true);
    t.phase_end(t.executor_start_begin(prepared));
    t.phase_end(t.run_begin(prepared));
    t.phase_end(t.run_begin(prepared));
    t.executor_end_done(t.executor_end_begin(prepared), prepared);
    t.utility_end(u, prepared);
    t.transaction_end(false, /*caught=*/false, false);
}

TEST(StatementTracker, ExecuteCountsOneCallOfThePreparedStatement) {
    for (bool all : {false, true}) {
        Tracker t;
        t.env.all = all;
        execute_prepared(t, 70);
        EXPECT_EQ(t.env.timing, (std::vector<std::string>{"start 70", "call 70", "end"})) << "track all " << all;
        EXPECT_EQ(t.level, 0);
    }
}

TEST(StatementTracker, CaughtErrorRestoresTheBlocksStatement) {
    Tracker t;
    t.env.all = true;
    t.parsed(1);  // DO
    StatementFrame u = t.utility_begin(1, false, false, false);
    t.subtransaction_start(2);  // BEGIN ... EXCEPTION block
    // SELECT 1/0 fails while planning: no frame returns.
    t.plan_begin(5);
    EXPECT_EQ(t.queryid(), 5u);
    EXPECT_EQ(t.level, 2);
    t.subtransaction_abort(2, /*caught=*/true);
    EXPECT_EQ(t.queryid(), 1u);
    EXPECT_EQ(t.level, 1);
    EXPECT_EQ(t.ids.state, kStmtActive);
    t.utility_end(u, 1);
    EXPECT_EQ(t.level, 0);
}

TEST(StatementTracker, ErrorCaughtWhilePlanningKeepsTheStatement) {
    Tracker t;
    t.env.all = true;
    t.parsed(7);
    StatementFrame p = t.plan_begin(7);
    t.subtransaction_start(2);  // a function with an exception block, folded to a constant
    t.subtransaction_abort(2, /*caught=*/true);
    EXPECT_EQ(t.queryid(), 7u);
    EXPECT_EQ(t.level, 1);
    EXPECT_EQ(t.ids.state, kStmtActive);
    t.phase_end(p);
    EXPECT_EQ(t.level, 0);
    EXPECT_EQ(t.queryid(), 7u);
}

TEST(StatementTracker, ErrorReachingTheMainLoopEndsTheStatement) {
    Tracker t;
    t.parsed(3);
    t.executor_start_begin(3);
    t.run_begin(3);  // error escapes
    t.transaction_end(/*aborted=*/true, /*caught=*/false, /*in_block=*/false);
    EXPECT_EQ(t.ids.state, kStmtIdle);
    EXPECT_EQ(t.level, 0);
    EXPECT_EQ(t.queryid(), 0u);
    // In an explicit block: idle in the aborted transaction.
    t.env.block = true;
    t.parsed(4);
    t.run_begin(4);
    t.transaction_end(true, false, true);
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
    EXPECT_EQ(t.top_queryid(), 0u);
}

TEST(StatementTracker, ErrorInAClientSavepointEndsTheStatement) {
    Tracker t;
    t.env.block = true;
    t.subtransaction_start(2);
    t.parsed(9);
    t.run_begin(9);
    t.subtransaction_abort(2, /*caught=*/false);
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
    EXPECT_EQ(t.queryid(), 0u);
    EXPECT_EQ(t.level, 0);
}

TEST(StatementTracker, ExplicitBlockIdleInTransactionKeepsIdsAndCommitBelongsToCommit) {
    Tracker t;
    t.env.block = true;
    t.parsed(20);  // BEGIN
    t.utility_end(t.utility_begin(20, false, false, false), 20);
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
    simple_select(t, 21);
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
    EXPECT_EQ(t.queryid(), 21u);
    t.parsed(22);  // COMMIT
    t.utility_end(t.utility_begin(22, false, /*ends_block=*/true, false), 22);
    EXPECT_EQ(t.ids.state, kStmtActive) << "the commit's WAL flush belongs to COMMIT";
    EXPECT_EQ(t.queryid(), 22u);
    t.env.block = false;
    t.transaction_end(false, false, false);
    EXPECT_EQ(t.ids.state, kStmtIdle);
    EXPECT_EQ(t.env.timing, (std::vector<std::string>{"start 20", "call 20", "end", "start 21", "call 21", "end",
                                                      "start 22", "call 22", "end"}));
}

TEST(StatementTracker, UtilityStatementIsOneStatementAndOneCall) {
    Tracker t;
    t.parsed(30);  // SET: parse analysis, then ProcessUtility with the same id
    t.utility_end(t.utility_begin(30, false, false, false), 30);
    t.transaction_end(false, false, false);
    EXPECT_EQ(t.env.timing, (std::vector<std::string>{"start 30", "call 30", "end"}));
    EXPECT_EQ(t.fresh_top_queryid(), 0u);
    t.parsed(31);
    EXPECT_EQ(t.fresh_top_queryid(), 31u);
}

TEST(StatementTracker, FetchChargesTheCursorsQueryTrackTop) {
    Tracker t;
    t.env.block = true;
    t.parsed(40);  // FETCH
    StatementFrame u = t.utility_begin(40, /*is_fetch=*/true, false, false);
    StatementFrame r = t.run_begin(41);  // the cursor's query, one level down
    EXPECT_EQ(t.queryid(), 41u);
    EXPECT_EQ(t.top_queryid(), 40u);
    t.phase_end(r);
    EXPECT_EQ(t.queryid(), 40u);
    t.utility_end(u, 40);
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
}

TEST(StatementTracker, NestedStatementsIgnoredUnderTrackTop) {
    Tracker t;
    t.parsed(50);
    StatementFrame r = t.run_begin(50);
    t.parsed(51);
    t.phase_end(t.plan_begin(51));
    StatementFrame n = t.run_begin(51);
    EXPECT_EQ(t.queryid(), 50u);
    t.phase_end(n);
    t.executor_end_done(t.executor_end_begin(51), 51);
    t.phase_end(r);
    EXPECT_EQ(t.queryid(), 50u);
    for (const auto &e : t.env.timing) EXPECT_EQ(e.find("51"), std::string::npos) << e;
}

TEST(StatementTracker, PortalOfAnOlderStatementEndingDoesNotEndTheNewOne) {
    Tracker t;
    t.env.block = true;
    t.parsed(60);
    t.phase_end(t.executor_start_begin(60));
    t.phase_end(t.run_begin(60));  // suspended portal
    t.parsed(61);                  // next statement's Parse
    t.executor_end_done(t.executor_end_begin(60), 60);  // Bind drops the old unnamed portal
    EXPECT_EQ(t.ids.state, kStmtActive);
    EXPECT_EQ(t.top_queryid(), 61u);
    EXPECT_EQ(t.env.timing.back(), "call 60");
}

TEST(StatementTracker, UnchangedIdsAreNotRepublished) {
    Tracker t;
    simple_select(t, 70);
    EXPECT_EQ(t.env.published.size(), 1u) << "one publish for start; run phases keep the same id";
}

// ---- ledger --------------------------------------------------------------

struct Spilled {
    std::vector<LedgerRow> rows;
    void operator()(const LedgerRow &r) { rows.push_back(r); }
};

TEST(StatementLedger, SegmentsChargeTheIdThatOwnedThem) {
    StatementLedger l;
    Spilled s;
    l.start(1, 1000);
    EXPECT_EQ(l.current(), 1u);
    l.switch_to(2, 1100, s);  // nested statement
    l.switch_to(1, 1400, s);
    l.count_call(2, s);
    l.switch_to(2, 1500, s);
    l.switch_to(0, 1600, s);  // 0: back to the top-level statement
    l.count_call(1, s);
    l.close(2000, s);
    EXPECT_FALSE(l.is_open());
    EXPECT_EQ(l.current(), 0u);
    ASSERT_EQ(s.rows.size(), 2u);
    uint64_t e1 = 0, e2 = 0, c1 = 0, c2 = 0;
    for (const auto &r : s.rows) {
        (r.queryid == 1 ? e1 : e2) += r.cpu_ns;
        (r.queryid == 1 ? c1 : c2) += r.calls;
    }
    EXPECT_EQ(e1, 100u + 100u + 400u);
    EXPECT_EQ(e2, 300u + 100u);
    EXPECT_EQ(e1 + e2, 1000u) << "segments add up to the statement's elapsed time";
    EXPECT_EQ(c1, 1u);
    EXPECT_EQ(c2, 1u);
}

TEST(StatementLedger, ManyIdsSpillWithoutLosingTime) {
    StatementLedger l;
    Spilled s;
    l.start(1, 0);
    int64_t t = 0;
    for (uint64_t q = 2; q < 40; q++) {
        t += 10;
        l.switch_to(q, t, s);
        l.count_call(q, s);
    }
    l.close(t + 10, s);
    uint64_t total = 0, calls = 0;
    for (const auto &r : s.rows) {
        total += r.cpu_ns;
        calls += r.calls;
    }
    EXPECT_EQ(total, static_cast<uint64_t>(t + 10));
    EXPECT_EQ(calls, 38u);
    EXPECT_LE(l.rows_used(), StatementLedger::kRows);
}

// The common case: time never leaves the statement's own id, closed in
// one row; calls counted through count_top_call say whose they were, and
// count_own_call counts one of the statement's own.
TEST(StatementLedger, OwnIdOnlyClosesInOneRow) {
    StatementLedger l;
    Spilled s;
    l.start(7, 100);
    EXPECT_TRUE(l.count_top_call(7, s));
    EXPECT_TRUE(l.count_top_call(7, s));
    EXPECT_TRUE(l.count_own_call(7)) << "the caller's fast path: the same count";
    EXPECT_FALSE(l.count_own_call(8)) << "count_own_call counts the statement's own id only";
    EXPECT_FALSE(l.count_own_call(0));
    EXPECT_FALSE(l.count_top_call(8, s)) << "another id (a cursor's query) is not the statement's";
    l.close(350, s);
    ASSERT_EQ(s.rows.size(), 2u);
    uint64_t e7 = 0, c7 = 0, c8 = 0;
    for (const auto &r : s.rows) {
        if (r.queryid == 7) {
            e7 += r.cpu_ns;
            c7 += r.calls;
        } else {
            EXPECT_EQ(r.queryid, 8u);
            EXPECT_EQ(r.cpu_ns, 0u) << "a call alone charges no time";
            c8 += r.calls;
        }
    }
    EXPECT_EQ(e7, 250u);
    EXPECT_EQ(c7, 3u);
    EXPECT_EQ(c8, 1u);
    EXPECT_FALSE(l.count_top_call(7, s)) << "closed: nothing is counted";
    EXPECT_FALSE(l.count_own_call(7)) << "closed: nothing is counted";
}

// A statement whose time went to another id and came back still closes
// through the general path: every segment charged once.
TEST(StatementLedger, BackToOwnIdStillChargesSegments) {
    StatementLedger l;
    Spilled s;
    l.start(1, 0);
    l.switch_to(2, 10, s);
    l.switch_to(0, 30, s);  // back: current is the statement's own id, one other row held
    l.close(100, s);
    uint64_t e1 = 0, e2 = 0;
    for (const auto &r : s.rows) (r.queryid == 1 ? e1 : e2) += r.cpu_ns;
    EXPECT_EQ(e1, 80u);
    EXPECT_EQ(e2, 20u);
}

// Each segment is charged its elapsed time less the waits that ended in
// it: per id, CPU time, and CPU plus waits is the id's elapsed time.
TEST(StatementLedger, WaitsAreTakenOutOfTheirOwnSegment) {
    StatementLedger l;
    Spilled s;
    l.start(1, 0);
    l.add_wait(30);  // the statement's own
    l.switch_to(2, 100, s);
    l.add_wait(50);  // the nested statement's
    l.add_wait(10);
    l.switch_to(0, 200, s);
    l.add_wait(5);
    l.count_call(2, s);
    l.close(300, s);
    uint64_t c1 = 0, c2 = 0;
    for (const auto &r : s.rows) (r.queryid == 1 ? c1 : c2) += r.cpu_ns;
    EXPECT_EQ(c1, (100u - 30u) + (100u - 5u));
    EXPECT_EQ(c2, 100u - 60u);

    // The common one-row path, and a new start forgets the last waits.
    Spilled s2;
    l.start(7, 1000);
    l.add_wait(400);
    l.close(1500, s2);
    l.start(7, 2000);
    l.close(2100, s2);
    ASSERT_EQ(s2.rows.size(), 2u);
    EXPECT_EQ(s2.rows[0].cpu_ns, 100u);
    EXPECT_EQ(s2.rows[1].cpu_ns, 100u);

    // Never negative: a segment all waits charges 0 (and, without a call,
    // spills nothing).
    Spilled s3;
    l.start(9, 0);
    l.add_wait(80);
    l.close(50, s3);
    EXPECT_TRUE(s3.rows.empty());
}

TEST(StatementLedger, ClosedLedgerIgnoresEverything) {
    StatementLedger l;
    Spilled s;
    l.switch_to(3, 10, s);
    l.count_call(3, s);
    l.close(20, s);
    EXPECT_TRUE(s.rows.empty());
}

}  // namespace

namespace {

using namespace psw;

// The hooks' fast paths (top level, or nested without attribution) leave the
// tracker where the frame paths would.
TEST(StatementTracker, FastPathsMatchFramePaths) {
    StatementTracker<RecordingEnv> a, b;
    a.parsed(11);
    b.parsed(11);
    a.enter_top_plan(11);
    a.leave();
    b.phase_end(b.plan_begin(11));
    a.enter_top_executor_start(11);
    a.leave();
    b.phase_end(b.executor_start_begin(11));
    a.enter_top_run(11);
    a.enter();  // a nested statement under track = top
    a.leave();
    a.executor_end_unattributed(12);
    a.leave();
    b.phase_end(b.run_begin(11));
    a.executor_end_unattributed(11);
    b.executor_end_done(b.executor_end_begin(11), 11);
    EXPECT_EQ(a.level, b.level);
    EXPECT_EQ(a.queryid(), b.queryid());
    EXPECT_EQ(a.env.timing, b.env.timing);
    EXPECT_EQ(a.env.published.size(), b.env.published.size());
}

}  // namespace

TEST(StatementTracker, WaitingForTheClientEndsABlocksStatement) {
    Tracker t;
    t.env.block = true;
    t.parsed(70);
    t.phase_end(t.executor_start_begin(70));
    t.phase_end(t.run_begin(70));  // Execute done; the portal waits for the next Bind
    t.client_wait();               // Sync's ReadyForQuery, then the client thinks
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
    EXPECT_EQ(t.top_queryid(), 70u);
    EXPECT_EQ(t.env.timing.back(), "end");
    t.executor_end_done(t.executor_end_begin(70), 70);  // dropped at the next Bind
    EXPECT_EQ(t.env.timing.back(), "call 70");
    EXPECT_EQ(t.ids.state, kStmtIdleInXact);
}

TEST(StatementTracker, WaitingForTheClientOutsideABlockChangesNothing) {
    Tracker t;
    t.parsed(71);
    t.phase_end(t.run_begin(71));
    size_t before = t.env.timing.size();
    t.client_wait();  // an autocommit statement ends at its commit
    EXPECT_EQ(t.ids.state, kStmtActive);
    EXPECT_EQ(t.env.timing.size(), before);
}
