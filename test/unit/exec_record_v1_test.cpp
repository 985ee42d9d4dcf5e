// A slow run saved by pg_stat_waits 1.2 (the "execs" section's version 1)
// read into the current record (src/core/exec_record_v1.h).
#include <gtest/gtest.h>

#include <cstring>

#include "../../src/core/exec_record_v1.h"

using namespace psw;

TEST(ExecRecordV1, LayoutOfTheReleasedFile) {
    // The size version 1 files were written with (x86-64, 1.2's ExecRecord).
    EXPECT_EQ(sizeof(ExecRecordV1), 1416u);
}

TEST(ExecRecordV1, EveryFieldKeptGpidsNone) {
    ExecRecordV1 old;
    std::memset(static_cast<void *>(&old), 0x5a, sizeof(old));
    old.started = 100;
    old.ended = 200;
    old.pid = 4242;
    old.datid = 5;
    old.userid = 10;
    old.nwaits = 2;
    old.rest_events = 1;
    old.queryid = 0x1234567890ULL;
    old.elapsed_ns = 777;
    old.wait_ns = 555;
    old.waits[0] = StatementWait{3, 4, 500};
    old.waits[1] = StatementWait{7, 1, 50};
    old.rest_calls = 9;
    old.rest_ns = 5;
    old.blockers.query_start = 90;
    old.blockers.seen_at = 150;
    old.blockers.count = 5;
    for (int i = 0; i < kMaxLockBlockers; i++)
        old.blockers.blockers[i] = LockBlockerV1{1000 + i, 1, 0x03000004u, 10u + i, 99u + i};
    old.text_len = 8;
    std::memcpy(old.text, "SELECT 1", 8);

    ExecRecord r;
    std::memset(static_cast<void *>(&r), 0x77, sizeof(r));
    exec_record_from_v1(old, &r);
    EXPECT_EQ(r.started, 100);
    EXPECT_EQ(r.ended, 200);
    EXPECT_EQ(r.pid, 4242);
    EXPECT_EQ(r.datid, 5u);
    EXPECT_EQ(r.userid, 10u);
    EXPECT_EQ(r.nwaits, 2);
    EXPECT_EQ(r.rest_events, 1);
    EXPECT_EQ(r.queryid, 0x1234567890ULL);
    EXPECT_EQ(r.gpid, 0);
    EXPECT_EQ(r.elapsed_ns, 777u);
    EXPECT_EQ(r.wait_ns, 555u);
    EXPECT_EQ(r.waits[0].index, 3);
    EXPECT_EQ(r.waits[1].ns, 50u);
    EXPECT_EQ(r.rest_calls, 9u);
    EXPECT_EQ(r.rest_ns, 5u);
    EXPECT_EQ(r.blockers.query_start, 90);
    EXPECT_EQ(r.blockers.seen_at, 150);
    EXPECT_EQ(r.blockers.count, 5u);
    for (int i = 0; i < kMaxLockBlockers; i++) {
        EXPECT_EQ(r.blockers.blockers[i].pid, 1000 + i);
        EXPECT_EQ(r.blockers.blockers[i].state, 1);
        EXPECT_EQ(r.blockers.blockers[i].wait_event_info, 0x03000004u);
        EXPECT_EQ(r.blockers.blockers[i].usesysid, 10u + i);
        EXPECT_EQ(r.blockers.blockers[i].queryid, 99u + i);
        EXPECT_EQ(r.blockers.blockers[i].gpid, 0);
    }
    EXPECT_EQ(r.text_len, 8u);
    EXPECT_EQ(std::memcmp(r.text, "SELECT 1", 8), 0);
    EXPECT_EQ(exec_record_problem(r, kWaitIndexLimit, 1000), nullptr);
}
