#include "executions.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

using psw::ExecRecord;
using psw::ExecRing;
using psw::StatementWaits;

TEST(StatementWaits, AddsPerIndexAndClearsInOneStep) {
    auto w = std::make_unique<StatementWaits>();
    w->clear();
    w->add(5, 1, 100);
    w->add(9, 1, 7);
    w->add(5, 1, 50);
    ASSERT_EQ(w->size(), 2);
    EXPECT_EQ(w->at(0).index, 5);
    EXPECT_EQ(w->at(0).calls, 2u);
    EXPECT_EQ(w->at(0).ns, 150u);
    EXPECT_EQ(w->at(1).calls, 1u);
    w->clear();
    EXPECT_EQ(w->size(), 0);
    // Stale positions from before the clear are not trusted.
    w->add(9, 1, 3);
    w->add(5, 1, 4);
    ASSERT_EQ(w->size(), 2);
    EXPECT_EQ(w->at(0).index, 9);
    EXPECT_EQ(w->at(0).ns, 3u);
    EXPECT_EQ(w->at(1).calls, 1u);
    EXPECT_EQ(w->at(1).ns, 4u);
    w->add(psw::kWaitIndexLimit, 1, 1);  // out of range: ignored
    EXPECT_EQ(w->size(), 2);
    // Several calls at once (a flush hands over an event's summed waits).
    w->add(9, 4, 40);
    EXPECT_EQ(w->at(0).calls, 5u);
    EXPECT_EQ(w->at(0).ns, 43u);
    EXPECT_EQ(w->size(), 2);
}

TEST(ExecSummary, HeaviestFirstRestSummed) {
    auto w = std::make_unique<StatementWaits>();
    w->clear();
    // 12 events; event i waits (i + 1) * 10 ns in i + 1 calls.
    for (uint16_t i = 0; i < 12; i++)
        for (uint16_t c = 0; c <= i; c++) w->add(i, 1, 10);
    auto r = std::make_unique<ExecRecord>();
    psw::exec_summarize_waits(*w, r.get());
    ASSERT_EQ(r->nwaits, psw::kExecWaits);
    for (int k = 0; k < psw::kExecWaits; k++) EXPECT_EQ(r->waits[k].index, 11 - k) << k;
    EXPECT_EQ(r->rest_events, 12 - psw::kExecWaits);
    // Events 0..3: 1 + 2 + 3 + 4 calls, 10 ns each.
    EXPECT_EQ(r->rest_calls, 10u);
    EXPECT_EQ(r->rest_ns, 100u);
    EXPECT_EQ(r->wait_ns, 780u);  // 10 * (1 + ... + 12)
}

TEST(ExecSummary, FewWaitsNoRest) {
    auto w = std::make_unique<StatementWaits>();
    w->clear();
    w->add(3, 1, 5);
    w->add(4, 1, 500);
    auto r = std::make_unique<ExecRecord>();
    psw::exec_summarize_waits(*w, r.get());
    ASSERT_EQ(r->nwaits, 2);
    EXPECT_EQ(r->waits[0].index, 4);
    EXPECT_EQ(r->waits[1].index, 3);
    EXPECT_EQ(r->rest_events, 0);
    EXPECT_EQ(r->rest_ns, 0u);
    EXPECT_EQ(r->wait_ns, 505u);
}

struct Ring {
    explicit Ring(uint32_t cap) : mem(new uint64_t[ExecRing::bytes(cap) / 8 + 1]) {
        ring = reinterpret_cast<ExecRing *>(mem.get());
        ring->init(cap);
    }
    std::unique_ptr<uint64_t[]> mem;
    ExecRing *ring;

    std::vector<uint64_t> queryids() {
        std::vector<uint64_t> out;
        auto scratch = std::make_unique<ExecRecord>();
        ring->for_each(scratch.get(), [&](const ExecRecord &r) { out.push_back(r.queryid); });
        return out;
    }
};

static ExecRecord *record(uint64_t queryid) {
    static ExecRecord r;
    std::memset(static_cast<void *>(&r), 0, sizeof(r));
    r.queryid = queryid;
    r.elapsed_ns = queryid * 1000;
    r.text_len = 3;
    std::memcpy(r.text, "abc", 3);
    return &r;
}

// A record loaded from the statistics file: what a statement produced
// passes, each impossible field is named.
TEST(ExecSummary, RecordProblemsAreNamed) {
    auto w = std::make_unique<StatementWaits>();
    w->clear();
    for (uint16_t i = 0; i < 12; i++) w->add(i, 1, 100 + i);
    auto good = std::make_unique<ExecRecord>();
    std::memset(static_cast<void *>(good.get()), 0, sizeof(ExecRecord));
    psw::exec_summarize_waits(*w, good.get());
    good->pid = 42;
    good->started = 1000;
    good->ended = 2000;
    good->elapsed_ns = 1000000;
    good->text_len = 3;
    EXPECT_EQ(psw::exec_record_problem(*good, 20, 5000), nullptr);
    auto r = std::make_unique<ExecRecord>();
    auto problem = [&](void (*damage)(ExecRecord *), uint16_t index_count = 20) {
        *r = *good;
        damage(r.get());
        return psw::exec_record_problem(*r, index_count, 5000);
    };
    EXPECT_STREQ(problem([](ExecRecord *) {}, 5), "a slow execution has an unknown wait event");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->nwaits = psw::kExecWaits + 1; }),
                 "a slow execution has more waits or text than fit");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->text_len = psw::kExecTextMax + 1; }),
                 "a slow execution has more waits or text than fit");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->ended = 6000; }), "a slow execution's process or times are impossible");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->started = 3000; }),
                 "a slow execution's process or times are impossible");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->pid = 0; }), "a slow execution's process or times are impossible");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->elapsed_ns = 1ULL << 63; }),
                 "a slow execution's counts or times are out of range");
    EXPECT_STREQ(problem([](ExecRecord *x) { x->waits[1].ns = ~0ULL; }),
                 "a slow execution's counts or times are out of range");
}

TEST(ExecRing, KeepsTheNewestOldestFirst) {
    Ring r(4);
    EXPECT_TRUE(r.queryids().empty());
    for (uint64_t q = 1; q <= 3; q++) ASSERT_TRUE(r.ring->publish(*record(q)));
    EXPECT_EQ(r.queryids(), (std::vector<uint64_t>{1, 2, 3}));
    for (uint64_t q = 4; q <= 10; q++) ASSERT_TRUE(r.ring->publish(*record(q)));
    EXPECT_EQ(r.queryids(), (std::vector<uint64_t>{7, 8, 9, 10}));
    EXPECT_EQ(r.ring->dropped_count(), 0u);
}

TEST(ExecRing, ResetHidesEverythingPublishedBefore) {
    Ring r(4);
    for (uint64_t q = 1; q <= 3; q++) r.ring->publish(*record(q));
    r.ring->reset();
    EXPECT_TRUE(r.queryids().empty());
    r.ring->publish(*record(42));
    EXPECT_EQ(r.queryids(), (std::vector<uint64_t>{42}));
}

TEST(ExecRing, BusyEntryDropsInsteadOfWaiting) {
    Ring r(2);
    // A writer of ticket 0 that stalls mid-write: its entry stays odd.
    r.ring->next = 1;
    r.ring->entries[0].seq = 1;
    ASSERT_TRUE(r.ring->publish(*record(1)));   // ticket 1, entry 1
    EXPECT_FALSE(r.ring->publish(*record(2)));  // ticket 2, entry 0: busy
    EXPECT_EQ(r.ring->dropped_count(), 1u);
    EXPECT_EQ(r.queryids(), (std::vector<uint64_t>{1}));  // the stalled ticket 0 is never shown
}

TEST(ExecRing, LappedWriterDoesNotOverwriteNewer) {
    Ring r(2);
    for (uint64_t q = 1; q <= 4; q++) r.ring->publish(*record(q));  // tickets 0..3
    // A late writer still holding ticket 1 (entry 1, now ticket 3's).
    uint64_t saved = r.ring->next;
    r.ring->next = 1;
    EXPECT_FALSE(r.ring->publish(*record(99)));
    r.ring->next = saved;
    EXPECT_EQ(r.queryids(), (std::vector<uint64_t>{3, 4}));
}

// Many writers and a reader at once: every record read is whole (its fields
// agree with each other), and all records are there at the end.
TEST(ExecRing, ConcurrentWritersAndReaderSeeWholeRecords) {
    Ring r(64);
    constexpr int kWriters = 4;
    constexpr int kPerWriter = 5000;
    std::atomic<bool> done{false};
    std::atomic<uint64_t> torn{0}, seen{0}, published{0};
    std::thread reader([&] {
        auto scratch = std::make_unique<ExecRecord>();
        while (!done.load()) {
            r.ring->for_each(scratch.get(), [&](const ExecRecord &rec) {
                seen++;
                if (rec.elapsed_ns != rec.queryid * 1000 || rec.wait_ns != rec.queryid ||
                    rec.text[0] != static_cast<char>('a' + rec.queryid % 26))
                    torn++;
            });
        }
    });
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; w++)
        writers.emplace_back([&, w] {
            auto rec = std::make_unique<ExecRecord>();
            std::memset(static_cast<void *>(rec.get()), 0, sizeof(ExecRecord));
            // At least kPerWriter each, and on until the reader has copied
            // records while writers ran (bounded).
            for (int i = 0; i < kPerWriter || (seen.load() < 2000 && i < 100 * kPerWriter); i++) {
                uint64_t q = static_cast<uint64_t>(w) * 1000000000 + i + 1;
                rec->queryid = q;
                rec->elapsed_ns = q * 1000;
                rec->wait_ns = q;
                std::memset(rec->text, 'a' + static_cast<int>(q % 26), sizeof(rec->text));
                r.ring->publish(*rec);
                published++;
            }
        });
    for (auto &t : writers) t.join();
    done = true;
    reader.join();
    EXPECT_EQ(torn.load(), 0u);
    EXPECT_GT(seen.load(), 0u);
    EXPECT_EQ(r.ring->next, published.load());
    // Once quiet, the last capacity tickets are all readable, less any
    // dropped ones (a lapped entry is rare but legal).
    size_t readable = r.queryids().size();
    EXPECT_LE(readable, 64u);
    EXPECT_GE(readable + r.ring->dropped_count(), 64u);
}

}  // namespace
