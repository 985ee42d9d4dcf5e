#include "sample_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

struct Sample {
    uint64_t pos;
    uint64_t check;  // pos * 3 + 1: a torn copy would break it
    char fill[40];
};

struct Ring {
    std::vector<char> mem;
    psw::SampleRing<Sample> ring;
    explicit Ring(uint64_t cap) : mem(psw::SampleRing<Sample>::bytes(cap)), ring(mem.data()) { ring.init(cap); }
};

std::vector<uint64_t> positions(const psw::SampleRing<Sample> &r) {
    std::vector<uint64_t> out;
    r.read([&](const Sample &s) { out.push_back(s.pos); });
    return out;
}

void push(psw::SampleRing<Sample> &r, uint64_t pos) {
    Sample s{};
    s.pos = pos;
    s.check = pos * 3 + 1;
    r.push(s);
}

TEST(SampleRing, EmptyReadsNothing) {
    Ring r(8);
    EXPECT_TRUE(positions(r.ring).empty());
    EXPECT_EQ(r.ring.used(), 0u);
    Sample s;
    EXPECT_FALSE(r.ring.oldest(&s));
}

TEST(SampleRing, KeepsTheNewestCapacityOldestFirst) {
    Ring r(5);
    for (uint64_t i = 0; i < 12; i++) push(r.ring, i);
    EXPECT_EQ(positions(r.ring), (std::vector<uint64_t>{7, 8, 9, 10, 11}));
    EXPECT_EQ(r.ring.used(), 5u);
    Sample s;
    ASSERT_TRUE(r.ring.oldest(&s));
    EXPECT_EQ(s.pos, 7u);
}

TEST(SampleRing, ResetHidesEverythingWrittenBefore) {
    Ring r(5);
    for (uint64_t i = 0; i < 3; i++) push(r.ring, i);
    r.ring.reset();
    EXPECT_TRUE(positions(r.ring).empty());
    EXPECT_EQ(r.ring.used(), 0u);
    push(r.ring, 100);
    EXPECT_EQ(positions(r.ring), (std::vector<uint64_t>{100}));
    EXPECT_EQ(r.ring.used(), 1u);
}

// A reader racing the writer sees only whole samples, in increasing order,
// and never waits: a lapped entry is skipped and counted.
TEST(SampleRing, ConcurrentReadersSeeNoTornOrReorderedSamples) {
    Ring r(1000);
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (uint64_t i = 0; !stop.load(); i++) push(r.ring, i);
    });
    while (r.ring.head() < 5000) std::this_thread::yield();
    uint64_t bad = 0, seen = 0;
    for (int round = 0; round < 200; round++) {
        uint64_t last = 0;
        bool first = true;
        r.ring.read([&](const Sample &s) {
            if (s.check != s.pos * 3 + 1) bad++;
            if (!first && s.pos <= last) bad++;
            first = false;
            last = s.pos;
            seen++;
        });
    }
    stop = true;
    writer.join();
    EXPECT_EQ(bad, 0u);
    EXPECT_GT(seen, 0u);
}

// The sampler gives samples taken before their statement had an id that id
// once it is known: in place, only while the sample is still present.
TEST(SampleRing, RewriteChangesPresentSamplesOnly) {
    Ring r(5);
    for (uint64_t i = 0; i < 8; i++) push(r.ring, i);  // 3..7 present
    auto mark = [](Sample &s) {
        s.fill[0] = 'x';
        return true;
    };
    EXPECT_FALSE(r.ring.rewrite(2, mark));  // overwritten
    EXPECT_FALSE(r.ring.rewrite(8, mark));  // not written yet
    EXPECT_TRUE(r.ring.rewrite(4, mark));
    EXPECT_FALSE(r.ring.rewrite(5, [](Sample &) { return false; }));  // the edit declined
    std::vector<char> marks;
    r.ring.read([&](const Sample &s) { marks.push_back(s.fill[0]); });
    EXPECT_EQ(marks, (std::vector<char>{0, 'x', 0, 0, 0}));
    EXPECT_EQ(positions(r.ring), (std::vector<uint64_t>{3, 4, 5, 6, 7}));
    r.ring.reset();
    EXPECT_FALSE(r.ring.rewrite(6, mark));  // hidden by a reset
}

// Readers racing in-place rewrites see each sample whole, before or after
// its rewrite, in order. A reader waits for a rewrite to finish; it skips
// the sample only when the writer is stopped mid-rewrite longer than the
// reader's bounded wait (a descheduled thread: rare, and counted).
TEST(SampleRing, ReadersWaitForSamplesBeingRewritten) {
    Ring r(1000);
    for (uint64_t i = 0; i < 1000; i++) push(r.ring, i);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> rewrites{0};
    std::thread writer([&] {
        for (uint64_t n = 0; !stop.load(); n++) {
            r.ring.rewrite(n % 1000, [n](Sample &s) {
                s.fill[0] = static_cast<char>(n);
                return true;
            });
            rewrites.store(n + 1, std::memory_order_relaxed);
        }
    });
    while (rewrites.load() < 1000) std::this_thread::yield();
    uint64_t bad = 0, skipped = 0, seen = 0, rounds = 0;
    // Reads while at least 100,000 rewrites happen (and 200 reads at least).
    const uint64_t until = rewrites.load() + 100000;
    while (rounds < 200 || rewrites.load() < until) {
        uint64_t last = 0;
        bool first = true;
        skipped += r.ring.read([&](const Sample &s) {
            if (s.check != s.pos * 3 + 1 || (!first && s.pos <= last)) bad++;
            first = false;
            last = s.pos;
            seen++;
        });
        rounds++;
    }
    stop = true;
    writer.join();
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(seen + skipped, rounds * 1000u);
    EXPECT_LE(skipped * 1000, seen) << "more than 0.1% of samples skipped";
}

}  // namespace
