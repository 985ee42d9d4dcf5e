#include "minute_buckets.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace {

struct Buckets {
    std::vector<char> mem;
    psw::MinuteBuckets b;
    explicit Buckets(uint32_t n) : mem(psw::MinuteBuckets::bytes(n)), b(mem.data()) { b.init(n); }
};

psw::MinuteKey key(uint32_t wait, uint64_t queryid) {
    psw::MinuteKey k{};
    k.wait = wait;
    k.queryid = queryid;
    return k;
}

uint64_t total(const psw::MinuteBuckets::MinuteCopy &m) {
    uint64_t s = 0;
    for (const auto &r : m.rows) s += r.count;
    return s;
}

TEST(MinuteBuckets, CountsPerMinuteAndCurrentMinuteIsReadable) {
    Buckets b(10);
    std::vector<psw::MinuteKey> keys = {key(1, 10), key(1, 10), key(2, 20)};
    b.b.tick(100, keys.data(), keys.size());
    b.b.tick(100, keys.data(), 1);
    b.b.tick(101, keys.data(), 2);
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].minute, 100);
    EXPECT_EQ(out[0].ticks, 2u);
    EXPECT_EQ(total(out[0]), 4u);
    EXPECT_EQ(out[1].minute, 101);  // still the scratch table
    EXPECT_EQ(total(out[1]), 2u);
    ASSERT_TRUE(b.b.read(101, &out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].minute, 101);
}

// More distinct keys than a bucket keeps: the top keys survive exactly,
// the rest fold into per-wait "other" rows, and the minute's total and each
// wait event's total stay exact.
TEST(MinuteBuckets, CompactionKeepsTopKeysAndExactTotals) {
    Buckets b(10);
    std::vector<psw::MinuteKey> keys;
    std::map<uint32_t, uint64_t> per_wait;
    for (uint64_t q = 1; q <= 1000; q++) {
        uint32_t wait = 0x01000000u + static_cast<uint32_t>(q % 5);
        int copies = q <= 10 ? 50 : 1;  // ten heavy queries
        for (int c = 0; c < copies; c++) keys.push_back(key(wait, q));
        per_wait[wait] += copies;
    }
    b.b.tick(5, keys.data(), keys.size());
    b.b.tick(6, nullptr, 0);  // closes minute 5
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(5, &out));
    ASSERT_EQ(out.size(), 2u);
    const auto &m = out[0];
    EXPECT_EQ(m.minute, 5);
    EXPECT_LE(m.rows.size(), psw::MinuteBuckets::kBucketKeys);
    EXPECT_EQ(total(m), keys.size());
    EXPECT_EQ(m.samples, keys.size());
    std::map<uint32_t, uint64_t> got;
    int heavy = 0;
    for (const auto &r : m.rows) {
        got[r.wait & ~psw::kWaitOtherQueries] += r.count;
        if ((r.wait & psw::kWaitOtherQueries) == 0 && r.queryid <= 10) {
            EXPECT_EQ(r.count, 50u);
            heavy++;
        }
    }
    EXPECT_EQ(heavy, 10);
    EXPECT_EQ(got, per_wait);
}

// A tick merges runs of equal neighbouring keys before hashing; the counts
// must be those of one sample at a time, runs split or not.
TEST(MinuteBuckets, RunsOfEqualKeysCountLikeSingleSamples) {
    Buckets b(4);
    std::vector<psw::MinuteKey> keys = {key(1, 10), key(1, 10), key(2, 20), key(1, 10),
                                        key(1, 10), key(1, 10), key(3, 30), key(3, 30)};
    b.b.tick(5, keys.data(), keys.size());
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 1u);
    std::map<uint32_t, uint64_t> by_wait;
    for (const auto &r : out[0].rows) by_wait[r.wait] += r.count;
    EXPECT_EQ(by_wait[1], 5u);
    EXPECT_EQ(by_wait[2], 1u);
    EXPECT_EQ(by_wait[3], 2u);
    EXPECT_EQ(out[0].samples, keys.size());
}

// Overflow of the scratch table with runs: the excess goes to "other" rows
// with its whole run, so the minute's total stays exact.
TEST(MinuteBuckets, ScratchOverflowWithRunsStaysExact) {
    Buckets b(4);
    std::vector<psw::MinuteKey> keys;
    for (uint64_t q = 1; q <= psw::MinuteBuckets::kScratchKeys + 100; q++)
        for (int r = 0; r < 3; r++) keys.push_back(key(7, q));
    b.b.tick(1, keys.data(), keys.size());
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(total(out[0]), keys.size());
}

TEST(MinuteBuckets, ScratchOverflowStaysExact) {
    Buckets b(4);
    std::vector<psw::MinuteKey> keys;
    for (uint64_t q = 1; q <= psw::MinuteBuckets::kScratchKeys + 1000; q++) keys.push_back(key(7, q));
    b.b.tick(1, keys.data(), keys.size());
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(total(out[0]), keys.size());
    b.b.tick(2, nullptr, 0);
    ASSERT_TRUE(b.b.read(1, &out));
    EXPECT_EQ(total(out[0]), keys.size());
}

TEST(MinuteBuckets, RecyclesAfterNBucketsAndClears) {
    Buckets b(3);
    psw::MinuteKey k = key(1, 1);
    for (int64_t m = 0; m < 10; m++) b.b.tick(m, &k, 1);
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 4u);  // three closed minutes and the current one
    EXPECT_EQ(out.front().minute, 6);
    EXPECT_EQ(out.back().minute, 9);
    EXPECT_EQ(b.b.oldest_minute(), 6);
    b.b.clear();
    ASSERT_TRUE(b.b.read(0, &out));
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(b.b.oldest_minute(), -1);
}

}  // namespace
