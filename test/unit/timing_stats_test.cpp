#include "timing_stats.h"
#include "wait_catalog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace psw;

TEST(TimingStats, CatalogFitsTheArrays) { EXPECT_LE(wait_index_count(), kMaxWaitIndex); }

TEST(TimingStats, HistogramBucketsAreLog2AndContiguous) {
    EXPECT_EQ(hist_bucket(0), 0);
    EXPECT_EQ(hist_bucket(1023), 0);
    EXPECT_EQ(hist_bucket(1024), 1);
    EXPECT_EQ(hist_bucket(2047), 1);
    EXPECT_EQ(hist_bucket(2048), 2);
    EXPECT_EQ(hist_bucket(~0ULL), kHistBuckets - 1);
    for (int b = 0; b < kHistBuckets; b++) {
        double lo, hi;
        hist_bucket_bounds_ns(b, &lo, &hi);
        EXPECT_LT(lo, hi);
        if (b > 0) {
            EXPECT_EQ(hist_bucket(static_cast<uint64_t>(lo)), b);
        }
        if (b < kHistBuckets - 1) {
            EXPECT_EQ(hist_bucket(static_cast<uint64_t>(hi) - 1), b);
            double lo2, hi2;
            hist_bucket_bounds_ns(b + 1, &lo2, &hi2);
            EXPECT_EQ(hi, lo2);
        } else {
            EXPECT_TRUE(std::isinf(hi));
        }
    }
}

TEST(TimingStats, LocalAccumulatesAndDrains) {
    auto l = std::make_unique<LocalTiming>();
    *l = LocalTiming{};
    EXPECT_FALSE(l->pending());
    l->add(5, 1000, true);
    l->add(5, 3000, false);
    l->add(7, 10, true);
    EXPECT_TRUE(l->pending());
    int seen = 0;
    l->drain([&](uint16_t idx, const EventCounters &c, uint64_t qc, uint64_t qns) {
        seen++;
        if (idx == 5) {
            EXPECT_EQ(c.calls, 2u);
            EXPECT_EQ(c.total_ns, 4000u);
            EXPECT_EQ(c.max_ns, 3000u);
            EXPECT_EQ(c.hist[0], 1u);
            EXPECT_EQ(c.hist[hist_bucket(3000)], 1u);
            EXPECT_EQ(qc, 1u);
            EXPECT_EQ(qns, 1000u);
        } else {
            EXPECT_EQ(idx, 7);
            EXPECT_EQ(qc, 1u);
        }
    });
    EXPECT_EQ(seen, 2);
    EXPECT_FALSE(l->pending());
    EXPECT_EQ(l->ev[5].calls, 0u);
    EXPECT_EQ(l->q_ns[5], 0u);
}

TEST(TimingStats, SharedEventsMergeAndSnapshot) {
    auto s = std::make_unique<SharedEvents>();
    s->init();
    EventCounters a{};
    a.calls = 2; a.total_ns = 50; a.max_ns = 40; a.hist[0] = 2;
    EventCounters b{};
    b.calls = 1; b.total_ns = 5000; b.max_ns = 5000; b.hist[hist_bucket(5000)] = 1;
    s->begin(); s->add(4, 3, a); s->add(4, 3, b); s->add(13, 3, a); s->end();
    std::vector<EventCounters> out(kMaxBackendTypes * kMaxWaitIndex);
    uint32_t types = 0;
    ASSERT_TRUE(s->snapshot(out.data(), kMaxWaitIndex, &types));
    EXPECT_EQ(types, (1u << 4) | (1u << 13));  // each backend type keeps its own row
    EXPECT_EQ(out[4 * kMaxWaitIndex + 3].calls, 3u);
    EXPECT_EQ(out[4 * kMaxWaitIndex + 3].total_ns, 5050u);
    EXPECT_EQ(out[4 * kMaxWaitIndex + 3].max_ns, 5000u);
    EXPECT_EQ(out[13 * kMaxWaitIndex + 3].calls, 2u);
    s->reset();
    ASSERT_TRUE(s->snapshot(out.data(), kMaxWaitIndex, &types));
    EXPECT_EQ(out[4 * kMaxWaitIndex + 3].calls, 0u);
    EXPECT_EQ(out[4 * kMaxWaitIndex + 3].max_ns, 0u);
    // A flush in progress makes readers give up rather than copy a torn state.
    s->begin();
    EXPECT_FALSE(s->snapshot(out.data(), kMaxWaitIndex, &types, 3));
    s->end();
}

TEST(TimingStats, SnapshotsUnderConcurrentFlushesAreConsistent) {
    auto s = std::make_unique<SharedEvents>();
    s->init();
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int t = 0; t < 3; t++)
        writers.emplace_back([&] {
            EventCounters c{};
            c.calls = 1; c.total_ns = 2000; c.max_ns = 2000; c.hist[hist_bucket(2000)] = 1;
            // Backends flush at statement end or once a second, not back to back:
            // a short pause between flushes models a busy server on 2 cores.
            while (!stop.load()) {
                s->begin(); s->add(1, 9, c); s->end();
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        });
    std::vector<EventCounters> out(kMaxBackendTypes * 16);
    int consistent = 0;
    for (int i = 0; i < 2000; i++) {
        uint32_t types = 0;
        if (!s->snapshot(out.data(), 16, &types, 1000)) continue;
        consistent++;
        uint64_t sum = 0;
        const EventCounters &e = out[1 * 16 + 9];
        for (int b = 0; b < kHistBuckets; b++) sum += e.hist[b];
        ASSERT_EQ(sum, e.calls);
        ASSERT_EQ(e.total_ns, e.calls * 2000);
    }
    stop = true;
    for (auto &w : writers) w.join();
    EXPECT_GT(consistent, 0);
}

struct TableMem {
    explicit TableMem(uint32_t cap) : mem(QueryTable::bytes(cap) / 8 + 1) {
        t = reinterpret_cast<QueryTable *>(mem.data());
        t->init(cap);
    }
    std::vector<uint64_t> mem;
    QueryTable *t;
};

using RowKey = std::tuple<uint64_t, uint32_t, uint32_t, uint16_t, uint8_t>;
std::map<RowKey, std::pair<uint64_t, uint64_t>> rows(const QueryTable &t) {
    std::map<RowKey, std::pair<uint64_t, uint64_t>> m;
    t.for_each([&](const QueryRow &r) {
        auto &v = m[{r.key.queryid, r.key.datid, r.key.userid, r.key.index, r.key.backend_type}];
        v.first += r.calls;
        v.second += r.total_ns;
    });
    return m;
}

TEST(QueryTable, AddsAggregatesCountsOverflowAndResets) {
    TableMem m(16);
    QueryKey k1{111, 5, 10, 3}, k2{111, 5, 10, 4};
    EXPECT_TRUE(m.t->add(k1, 1, 100));
    EXPECT_TRUE(m.t->add(k1, 2, 50));
    EXPECT_TRUE(m.t->add(k2, 1, 7));
    auto r = rows(*m.t);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[std::make_tuple(111ULL, 5u, 10u, uint16_t(3), uint8_t(0))], std::make_pair(uint64_t(3), uint64_t(150)));
    for (uint64_t q = 1000; q < 1020; q++) m.t->add(QueryKey{q, 1, 1, 1}, 1, 1);
    EXPECT_EQ(m.t->used(), 16u);
    EXPECT_EQ(m.t->dropped_count(), 6u);  // 22 keys, 16 slots
    m.t->reset();
    EXPECT_EQ(m.t->used(), 0u);
    EXPECT_EQ(m.t->dropped_count(), 0u);
    EXPECT_TRUE(m.t->add(k1, 1, 1));  // stale slots are reusable
    EXPECT_EQ(rows(*m.t).size(), 1u);
}

TEST(QueryTable, ConcurrentWritersLoseNothing) {
    TableMem m(1024);
    std::vector<std::thread> th;
    for (int t = 0; t < 4; t++)
        th.emplace_back([&] {
            for (int i = 0; i < 20000; i++) m.t->add(QueryKey{static_cast<uint64_t>(i % 50), 1, 2, 3}, 1, 10);
        });
    for (auto &x : th) x.join();
    auto r = rows(*m.t);
    EXPECT_EQ(r.size(), 50u);
    uint64_t calls = 0;
    for (auto &kv : r) calls += kv.second.first;
    EXPECT_EQ(calls, 80000u);
    EXPECT_EQ(m.t->dropped_count(), 0u);
}

TEST(TimingPersistence, SaveLoadRoundTripAndRefusesForeignData) {
    auto s = std::make_unique<SharedEvents>();
    s->init();
    EventCounters c{};
    c.calls = 4; c.total_ns = 4000; c.max_ns = 1500; c.hist[0] = 2; c.hist[1] = 2;
    s->begin(); s->add(12, 12, c); s->end();
    TableMem m(64);
    m.t->add(QueryKey{77, 1, 2, 12, 12}, 4, 4000);
    m.t->add(QueryKey{77, 1, 2, 12, 4}, 1, 10);
    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(timing_save(f, *s, *m.t, wait_index_count()));
    std::rewind(f);

    auto s2 = std::make_unique<SharedEvents>();
    s2->init();
    TableMem m2(64);
    ASSERT_TRUE(timing_load(f, s2.get(), m2.t, wait_index_count()));
    std::vector<EventCounters> out(kMaxBackendTypes * kMaxWaitIndex);
    uint32_t types = 0;
    s2->snapshot(out.data(), kMaxWaitIndex, &types);
    EXPECT_EQ(types, 1u << 12);
    EXPECT_EQ(out[12 * kMaxWaitIndex + 12].calls, 4u);
    EXPECT_EQ(out[12 * kMaxWaitIndex + 12].max_ns, 1500u);
    EXPECT_EQ(out[12 * kMaxWaitIndex + 12].hist[1], 2u);
    EXPECT_EQ(rows(*m2.t)[std::make_tuple(77ULL, 1u, 2u, uint16_t(12), uint8_t(12))], std::make_pair(uint64_t(4), uint64_t(4000)));
    EXPECT_EQ(rows(*m2.t)[std::make_tuple(77ULL, 1u, 2u, uint16_t(12), uint8_t(4))], std::make_pair(uint64_t(1), uint64_t(10)));

    std::rewind(f);  // a build with another catalog refuses the block
    auto s3 = std::make_unique<SharedEvents>();
    s3->init();
    EXPECT_FALSE(timing_load(f, s3.get(), m2.t, static_cast<uint16_t>(wait_index_count() - 1)));
    std::rewind(f);
    std::fputs("garbage", f);
    std::rewind(f);
    EXPECT_FALSE(timing_load(f, s3.get(), m2.t, wait_index_count()));
    std::fclose(f);
}

// timing_check accepts what the counters can hold and names what they
// cannot: each damaged block is built by saving tables that hold it.
const char *check_saved(const EventCounters &c, uint8_t event_type, const QueryKey &row, uint64_t row_calls) {
    auto s = std::make_unique<SharedEvents>();
    s->init();
    s->begin();
    s->add(event_type, 12, c);
    s->end();
    TableMem m(64);
    m.t->add(row, row_calls, 4000);
    FILE *f = std::tmpfile();
    EXPECT_NE(f, nullptr);
    EXPECT_TRUE(timing_save(f, *s, *m.t, wait_index_count()));
    std::rewind(f);
    const char *problem = timing_check(f, wait_index_count(), 14);
    std::fclose(f);
    return problem;
}

TEST(TimingPersistence, CheckRefusesImplausibleBlocks) {
    EventCounters c{};
    c.calls = 4;
    c.total_ns = 4000;
    c.max_ns = 1500;
    c.hist[0] = 2;
    c.hist[1] = 2;
    const QueryKey row{77, 1, 2, 12, 13};
    EXPECT_EQ(check_saved(c, 13, row, 4), nullptr);

    EventCounters huge = c;
    huge.calls = huge.hist[0] = 1ULL << 63;
    EXPECT_STREQ(check_saved(huge, 13, row, 4), "an event's calls or time are out of range");
    EventCounters unbalanced = c;
    unbalanced.hist[5] = 1;
    EXPECT_STREQ(check_saved(unbalanced, 13, row, 4), "an event's histogram does not add up to its calls");
    EventCounters long_max = c;
    long_max.max_ns = 3000;  // in bucket 2, where no call was counted
    EXPECT_STREQ(check_saved(long_max, 13, row, 4), "an event's longest call does not fit its total or histogram");
    EXPECT_STREQ(check_saved(c, 14, row, 4), "an event row has an unknown backend type");
    EXPECT_STREQ(check_saved(c, 13, QueryKey{77, 1, 2, 12, 20}, 4), "a per-query row has an unknown backend type");
    EXPECT_STREQ(check_saved(c, 13, QueryKey{77, 1, 2, wait_index_count(), 13}, 4),
                 "a per-query row has an unknown wait event");
    EXPECT_STREQ(check_saved(c, 13, row, 1ULL << 63), "a per-query row's calls or time are out of range");

    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    std::fputs("garbage", f);
    std::rewind(f);
    EXPECT_STREQ(timing_check(f, wait_index_count(), 14),
                 "the block does not match this build's layout or is truncated");
    std::fclose(f);
}

// Eviction frees the least used entries (usage raised by every add, lowered
// by the hand), so a table fed with ever-new keys keeps taking the newest
// ones instead of dropping them, and counts what it evicted.
TEST(QueryTable, EvictionKeepsTheNewestAndCounts) {
    TableMem m(256);
    const uint64_t target = 128;
    uint64_t dropped_before = 0;
    for (uint64_t q = 1; q <= 5000; q++) {
        m.t->add(QueryKey{q, 1, 1, 1}, 1, 1);
        m.t->add(QueryKey{q, 1, 1, 1}, 1, 1);  // used twice
        if (q % 8 == 0) m.t->evict_step(target, 64);  // the sampler's bounded step per tick
    }
    dropped_before = m.t->dropped_count();
    auto r = rows(*m.t);
    // The last keys added are all present, whole.
    for (uint64_t q = 4990; q <= 5000; q++) {
        auto it = r.find(std::make_tuple(q, 1u, 1u, uint16_t(1), uint8_t(0)));
        ASSERT_NE(it, r.end()) << q;
        EXPECT_EQ(it->second.first, 2u);
    }
    EXPECT_GT(m.t->evicted_count(), 4000u);
    EXPECT_EQ(dropped_before, 0u);
    EXPECT_LE(r.size(), 256u);
    EXPECT_EQ(m.t->evicted_count() + r.size(), 5000u);  // nothing lost without being counted
    m.t->reset();
    EXPECT_EQ(m.t->evicted_count(), 0u);
}

// A heavy key that keeps being used survives a stream of one-off keys.
TEST(QueryTable, EvictionSparesKeysInUse) {
    TableMem m(64);
    for (uint64_t q = 100; q < 2100; q++) {
        m.t->add(QueryKey{1, 1, 1, 1}, 1, 1);
        m.t->add(QueryKey{q, 1, 1, 1}, 1, 1);
        m.t->evict_step(32, 16);
    }
    auto r = rows(*m.t);
    auto it = r.find(std::make_tuple(1ULL, 1u, 1u, uint16_t(1), uint8_t(0)));
    ASSERT_NE(it, r.end());
    EXPECT_EQ(it->second.first, 2000u);
}

// Writers adding while the evictor frees entries: every add lands either in
// a live entry of its own key or in an evicted one, never in another key's.
TEST(QueryTable, ConcurrentEvictionNeverMixesKeys) {
    TableMem m(128);
    std::atomic<bool> stop{false};
    // Writers go on until the evictor has run a while beside them: on a
    // loaded machine the evictor's thread may start only after 60,000 adds.
    std::atomic<int> evict_steps{0};
    std::vector<std::thread> th;
    for (int t = 0; t < 3; t++)
        th.emplace_back([&, t] {
            for (uint64_t i = 0; i < 60000 || (evict_steps.load() < 200 && i < 60000000); i++) {
                uint64_t q = (i * 7 + static_cast<uint64_t>(t)) % 400 + 1;
                // calls = q and ns = 1000 q: an entry of key q always has
                // calls a multiple of q and ns = 1000 × calls.
                m.t->add(QueryKey{q, 1, 1, 1}, q, 1000 * q);
            }
        });
    std::thread evictor([&] {
        while (!stop.load()) {
            m.t->evict_step(64, 32);
            evict_steps.fetch_add(1);
        }
    });
    for (auto &x : th) x.join();
    stop = true;
    evictor.join();
    m.t->for_each([&](const QueryRow &r) {
        ASSERT_EQ(r.calls % r.key.queryid, 0u) << r.key.queryid;
        ASSERT_EQ(r.total_ns, 1000 * r.calls);
    });
    EXPECT_GT(m.t->evicted_count(), 0u);
}

// Format 2 saved each statement's elapsed time in its CPU row; format 3 its
// CPU time. A file of 2 loads with the waits taken out, one of 3 as it is.
TEST(TimingPersistence, FormatTwoCpuRowsLoadAsElapsedMinusWaits) {
    const uint16_t cpu = wait_index(0);
    const uint16_t sleep = wait_index(wait_info_make(kClassTimeout, 0));
    const uint16_t pread = unreported_index(kCallPread);
    auto s = std::make_unique<SharedEvents>();
    s->init();
    TableMem m(64);
    m.t->add(QueryKey{77, 1, 2, cpu, 4}, 2, 5000);
    m.t->add(QueryKey{77, 1, 2, sleep, 4}, 2, 3000);
    m.t->add(QueryKey{77, 1, 2, pread, 4}, 1, 500);
    m.t->add(QueryKey{77, 1, 2, sleep, 13}, 1, 900);  // a parallel worker's, not the statement's own
    m.t->add(QueryKey{78, 1, 2, cpu, 4}, 1, 100);
    m.t->add(QueryKey{78, 1, 2, sleep, 4}, 1, 400);  // more waits than elapsed: CPU 0
    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(timing_save(f, *s, *m.t, wait_index_count()));
    for (uint32_t format : {3u, 2u}) {
        ASSERT_EQ(std::fseek(f, 8, SEEK_SET), 0);  // the header's first word, after the magic
        ASSERT_EQ(std::fwrite(&format, 1, sizeof(format), f), sizeof(format));
        std::rewind(f);
        auto s2 = std::make_unique<SharedEvents>();
        s2->init();
        TableMem m2(64);
        ASSERT_TRUE(timing_load(f, s2.get(), m2.t, wait_index_count())) << "format " << format;
        auto r = rows(*m2.t);
        const bool elapsed = format == 2;
        EXPECT_EQ(r[std::make_tuple(77ULL, 1u, 2u, cpu, uint8_t(4))],
                  std::make_pair(uint64_t(2), uint64_t(elapsed ? 5000 - 3000 - 500 : 5000)));
        EXPECT_EQ(r[std::make_tuple(78ULL, 1u, 2u, cpu, uint8_t(4))],
                  std::make_pair(uint64_t(1), uint64_t(elapsed ? 0 : 100)));
        EXPECT_EQ(r[std::make_tuple(77ULL, 1u, 2u, sleep, uint8_t(4))], std::make_pair(uint64_t(2), uint64_t(3000)));
        EXPECT_EQ(r[std::make_tuple(77ULL, 1u, 2u, sleep, uint8_t(13))], std::make_pair(uint64_t(1), uint64_t(900)));
    }
    std::fclose(f);
}

TEST(TimingPersistence, RefusesFormatOne) {
    // A block of format 1 (no backend types) is refused, not misread.
    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    const char magic[8] = {'P', 'S', 'W', 'T', 'I', 'M', 'E', '\0'};
    uint32_t header[5] = {1, wait_index_count(), static_cast<uint32_t>(kHistBuckets), 40, 0};
    std::fwrite(magic, 1, 8, f);
    std::fwrite(header, 1, sizeof(header), f);
    std::rewind(f);
    auto s = std::make_unique<SharedEvents>();
    s->init();
    TableMem m(16);
    EXPECT_FALSE(timing_load(f, s.get(), m.t, wait_index_count()));
    std::fclose(f);
}

}  // namespace
