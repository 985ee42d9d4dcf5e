// What a blocked statement's slot keeps of successive blocker lookups.
#include "lock_blockers.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace psw {
namespace {

LockBlockers seen(int64_t query_start, std::initializer_list<int32_t> pids, uint8_t state, uint64_t queryid) {
    LockBlockers b{};
    b.query_start = query_start;
    for (int32_t p : pids) {
        if (b.count < static_cast<uint32_t>(kMaxLockBlockers)) {
            b.blockers[b.count].pid = p;
            b.blockers[b.count].state = state;
            b.blockers[b.count].queryid = queryid;
        }
        b.count++;
    }
    return b;
}

TEST(LockBlockers, SameSessionsDoingSomethingElseKeepTheFirstView) {
    // Idle in transaction after its UPDATE, then seen in the COMMIT that
    // releases the lock: the slot keeps the UPDATE.
    LockBlockers idle = seen(100, {42}, 3, 7777);
    LockBlockers committing = seen(100, {42}, 1, 8888);
    EXPECT_TRUE(same_blocker_pids(idle, committing));
    EXPECT_FALSE(blockers_replace(idle, committing));
}

TEST(LockBlockers, OtherSessionsReplaceTheView) {
    LockBlockers a = seen(100, {42}, 3, 7777);
    EXPECT_TRUE(blockers_replace(a, seen(100, {43}, 3, 7777)));
    EXPECT_TRUE(blockers_replace(a, seen(100, {42, 43}, 3, 7777)));
    EXPECT_TRUE(blockers_replace(seen(100, {42, 43}, 3, 1), seen(100, {43, 42}, 3, 1)));
    // Another statement of the same backend (query_start differs).
    EXPECT_TRUE(blockers_replace(a, seen(200, {42}, 3, 7777)));
}

TEST(LockBlockers, SameBlockersComparesWhatEachWasDoing) {
    LockBlockers idle = seen(100, {42}, 3, 7777);
    EXPECT_TRUE(same_blockers(idle, seen(100, {42}, 3, 7777)));
    EXPECT_FALSE(same_blockers(idle, seen(100, {42}, 1, 7777)));  // another state
    EXPECT_FALSE(same_blockers(idle, seen(100, {42}, 3, 8888)));  // another statement
    EXPECT_FALSE(same_blockers(idle, seen(100, {43}, 3, 7777)));  // another session
}

TEST(LockBlockers, BeyondTheKeptEntriesOnlyTheCountIsCompared) {
    EXPECT_EQ(blockers_kept(seen(100, {1, 2}, 0, 0)), 2u);
    EXPECT_EQ(blockers_kept(seen(100, {1, 2, 3, 4, 5}, 0, 0)), static_cast<uint32_t>(kMaxLockBlockers));
    LockBlockers many = seen(100, {1, 2, 3, 4, 5}, 0, 0);
    LockBlockers other_fifth = seen(100, {1, 2, 3, 4, 6}, 0, 0);
    EXPECT_TRUE(same_blocker_pids(many, other_fifth));
    EXPECT_TRUE(blockers_replace(many, seen(100, {1, 2, 3, 4, 5, 6}, 0, 0)));
}

}  // namespace
}  // namespace psw
