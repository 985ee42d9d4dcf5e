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

}  // namespace
