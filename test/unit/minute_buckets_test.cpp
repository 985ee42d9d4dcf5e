#include "minute_buckets.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <new>
#include <vector>

// GCC pairs a replaced operator new with free() as "mismatched"; the
// replacement below is the matching pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// Counts heap allocations made by this thread while counting is on (global
// replacement for the whole test binary; off, it is plain malloc).
namespace {
thread_local bool count_allocations = false;
thread_local size_t allocations = 0;
}  // namespace

void *operator new(std::size_t n) {
    if (count_allocations) allocations++;
    void *p = std::malloc(n ? n : 1);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
// The nothrow form too (std::stable_sort's temporary buffer uses it): every
// form of new that reaches the plain delete must come from malloc here, or
// AddressSanitizer reports a new/free mismatch.
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
    if (count_allocations) allocations++;
    return std::malloc(n ? n : 1);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }

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

// The writer allocates nothing, closing a minute included: an allocation
// inside its sequence section could throw and leave the counter odd for good
// (readers would then never get a consistent copy).
TEST(MinuteBuckets, TickAllocatesNothingAndLeavesSequencesEven) {
    Buckets b(8);
    std::vector<psw::MinuteKey> keys;
    for (uint64_t q = 1; q <= 3000; q++) keys.push_back(key(static_cast<uint32_t>(q % 7), q));
    allocations = 0;
    count_allocations = true;
    b.b.tick(10, keys.data(), keys.size());
    b.b.tick(11, keys.data(), keys.size());  // closes minute 10: sorts and compacts 3000 keys
    b.b.tick(12, keys.data(), 10);
    count_allocations = false;
    EXPECT_EQ(allocations, 0u);
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));  // every sequence even: readers succeed at once
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(total(out[0]), keys.size());
    EXPECT_EQ(total(out[1]), keys.size());
}

// A busy minute with more distinct keys than the scratch table keeps: the
// least used keys are folded into their wait's "other" row as the minute
// goes on, so a heavy query that starts late still gets its own row, the
// minute's total stays exact, and the folds are counted.
TEST(MinuteBuckets, ScratchEvictionMakesRoomForLateKeys) {
    Buckets b(4);
    uint64_t samples = 0;
    // 100 ticks, each with 100 one-off queries: 10,000 keys in the minute.
    for (int t = 0; t < 100; t++) {
        std::vector<psw::MinuteKey> keys;
        for (int i = 0; i < 100; i++) keys.push_back(key(7, 1000000 + static_cast<uint64_t>(t) * 100 + static_cast<uint64_t>(i)));
        if (t >= 90)
            for (int r = 0; r < 20; r++) keys.push_back(key(7, 42));  // late and heavy
        b.b.tick(5, keys.data(), keys.size());
        samples += keys.size();
    }
    EXPECT_GT(b.b.evicted(), 5000u);
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(total(out[0]), samples);
    uint64_t late = 0;
    for (const auto &r : out[0].rows)
        if (r.queryid == 42 && r.wait == 7) late = r.count;
    EXPECT_EQ(late, 200u);
    b.b.clear();
    EXPECT_EQ(b.b.evicted(), 0u);
}

// Samples taken before their statement had an id (queryid 0) get it later:
// in the current minute and in closed ones, from their own row or from the
// "other" row they were folded into; totals never change.
TEST(MinuteBuckets, MoveReattributesWithoutChangingTotals) {
    Buckets b(10);
    std::vector<psw::MinuteKey> keys = {key(7, 0), key(7, 0), key(7, 0), key(2, 20)};
    b.b.tick(100, keys.data(), keys.size());
    b.b.tick(101, keys.data(), keys.size());  // closes minute 100
    EXPECT_EQ(b.b.move(100, 7, 0, 55, 2), 2u);
    EXPECT_EQ(b.b.move(101, 7, 0, 55, 5), 3u);  // only 3 were there
    EXPECT_EQ(b.b.move(99, 7, 0, 55, 1), 0u);   // no such minute
    std::vector<psw::MinuteBuckets::MinuteCopy> out;
    ASSERT_TRUE(b.b.read(0, &out));
    ASSERT_EQ(out.size(), 2u);
    auto count = [](const psw::MinuteBuckets::MinuteCopy &m, uint32_t wait, uint64_t q) {
        for (const auto &r : m.rows)
            if (r.wait == wait && r.queryid == q) return static_cast<uint64_t>(r.count);
        return uint64_t{0};
    };
    EXPECT_EQ(count(out[0], 7, 0), 1u);
    EXPECT_EQ(count(out[0], 7, 55), 2u);
    EXPECT_EQ(total(out[0]), 4u);
    for (const auto &r : out[0].rows) EXPECT_NE(r.count, 0u);
    EXPECT_EQ(count(out[1], 7, 0), 0u);  // taken to zero: gone
    EXPECT_EQ(count(out[1], 7, 55), 3u);
    EXPECT_EQ(total(out[1]), 4u);
    b.b.tick(102, keys.data(), 1);  // closes 101 with the moved row
    ASSERT_TRUE(b.b.read(101, &out));
    EXPECT_EQ(count(out[0], 7, 55), 3u);
    EXPECT_EQ(total(out[0]), 4u);
}

TEST(MinuteBuckets, MoveTakesFromTheOtherRow) {
    Buckets b(4);
    // More distinct queryids than a bucket keeps, all of wait 3, one of
    // them queryid 0 with the fewest samples: folded into "other".
    std::vector<psw::MinuteKey> keys;
    for (uint64_t q = 1; q <= psw::MinuteBuckets::kBucketKeys + 10; q++)
        for (int c = 0; c < 3; c++) keys.push_back(key(3, q));
    keys.push_back(key(3, 0));
    b.b.tick(10, keys.data(), keys.size());
    b.b.tick(11, keys.data(), 1);
    std::vector<psw::MinuteBuckets::MinuteCopy> before;
    ASSERT_TRUE(b.b.read(10, &before));
    ASSERT_EQ(before[0].minute, 10);
    EXPECT_EQ(b.b.move(10, 3, 0, 99999, 1), 1u);
    std::vector<psw::MinuteBuckets::MinuteCopy> after;
    ASSERT_TRUE(b.b.read(10, &after));
    EXPECT_EQ(total(after[0]), total(before[0]));
    EXPECT_LE(after[0].rows.size(), psw::MinuteBuckets::kBucketKeys);
    uint64_t other_before = 0, other_after = 0, own = 0;
    for (const auto &r : before[0].rows)
        if (r.wait == (3u | psw::kWaitOtherQueries)) other_before = r.count;
    for (const auto &r : after[0].rows) {
        if (r.wait == (3u | psw::kWaitOtherQueries)) other_after = r.count;
        if (r.wait == 3u && r.queryid == 99999) own = r.count;
    }
    // Queryid 0 was folded into "other": the sample leaves that row for a
    // row of its own (the bucket has room: only the top keys and the
    // "other" rows were kept).
    EXPECT_EQ(other_after + 1, other_before);
    EXPECT_EQ(own, 1u);
}

// The region is loaded as raw memory from the statistics file: check()
// accepts what the writer produced (compaction, folding, moves) and refuses
// each kind of damage a changed byte could leave.
bool known_wait(uint32_t wait) { return wait < 100; }

TEST(MinuteBuckets, CheckAcceptsWrittenRegionsAndRefusesDamage) {
    using MB = psw::MinuteBuckets;
    Buckets b(10);
    std::vector<psw::MinuteKey> keys;
    for (uint64_t q = 0; q < MB::kBucketKeys * 2; q++) keys.push_back(key(static_cast<uint32_t>(q % 80), q));
    for (int64_t m = 5; m < 18; m++) b.b.tick(m, keys.data(), keys.size());  // recycles buckets
    b.b.move(16, 3, 3, 4, 1);
    const char *why = nullptr;
    ASSERT_TRUE(b.b.check(17, known_wait, &why)) << why;
    EXPECT_FALSE(b.b.check(16, known_wait, &why));  // the current minute is in the future
    EXPECT_STREQ(why, "a minute lies outside the clock's range");

    const std::vector<char> good = b.mem;
    MB::Bucket *buckets = reinterpret_cast<MB::Bucket *>(b.mem.data() + sizeof(MB::Header));
    MB::Header *h = reinterpret_cast<MB::Header *>(b.mem.data());
    MB::Bucket &closed = buckets[16 % 10];
    ASSERT_EQ(closed.minute, 16);
    struct Damage {
        const char *what;
        void (*apply)(MB::Header *, MB::Bucket &);
    };
    const Damage damages[] = {
        {"a row's count", [](MB::Header *, MB::Bucket &c) { c.rows[0].count += 1000; }},
        {"the samples", [](MB::Header *, MB::Bucket &c) { c.samples = 1ULL << 62; }},
        {"an unknown wait", [](MB::Header *, MB::Bucket &c) { c.rows[1].wait = 5000; }},
        {"the row count", [](MB::Header *, MB::Bucket &c) { c.nrows = MB::kBucketKeys + 1; }},
        {"the minute", [](MB::Header *, MB::Bucket &c) { c.minute = 17 + 10; }},
        {"a minute at the wrong position", [](MB::Header *, MB::Bucket &c) { c.minute = 15; }},
        {"a negative minute", [](MB::Header *, MB::Bucket &c) { c.minute = -7; }},
        {"an odd sequence", [](MB::Header *, MB::Bucket &c) { c.seq.seq++; }},
        {"the current samples", [](MB::Header *hd, MB::Bucket &) { hd->current.samples++; }},
    };
    for (const Damage &d : damages) {
        b.mem = good;
        d.apply(h, closed);
        why = nullptr;
        EXPECT_FALSE(b.b.check(17, known_wait, &why)) << d.what;
        EXPECT_NE(why, nullptr) << d.what;
    }
    // A scratch slot's count (the table follows the buckets).
    b.mem = good;
    char *scratch = b.mem.data() + sizeof(MB::Header) + 10 * sizeof(MB::Bucket);
    auto *slots = reinterpret_cast<psw::FixedHashTable<psw::MinuteKey>::Slot *>(
        scratch + sizeof(psw::FixedHashTable<psw::MinuteKey>::Header));
    size_t used = 0;
    while (slots[used].count == 0) used++;
    slots[used].count += 1;
    EXPECT_FALSE(b.b.check(17, known_wait, &why));
    b.mem = good;
    EXPECT_TRUE(b.b.check(17, known_wait, &why));
}

}  // namespace
