#include "seqlock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

struct Payload {
    uint64_t a;
    uint64_t b;
    uint64_t c;
};

TEST(SeqLock, InitZeroesAndReads) {
    psw::SeqLocked<Payload> s;
    s.init();
    Payload out{1, 2, 3};
    ASSERT_TRUE(s.read(&out));
    EXPECT_EQ(out.a, 0u);
    EXPECT_EQ(out.c, 0u);
}

TEST(SeqLock, WriteIsVisible) {
    psw::SeqLocked<Payload> s;
    s.init();
    s.write([](Payload &p) { p = {7, 8, 9}; });
    Payload out{};
    ASSERT_TRUE(s.read(&out));
    EXPECT_EQ(out.b, 8u);
    EXPECT_EQ(s.seq.seq % 2, 0u);
}

TEST(SeqLock, ReaderGivesUpOnAbandonedWrite) {
    // A writer that died mid-write leaves the sequence odd; readers must not hang.
    psw::SeqLocked<Payload> s;
    s.init();
    s.write_begin();
    Payload out{};
    EXPECT_FALSE(s.read(&out, 50));
    s.write_end();
    EXPECT_TRUE(s.read(&out, 50));
}

TEST(SeqLock, ConcurrentReadersNeverSeeTornPayload) {
    psw::SeqLocked<Payload> s;
    s.init();
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> writes{0};
    std::thread writer([&] {
        for (uint64_t i = 1; !stop; i++) {
            s.write([i](Payload &p) { p = {i, i * 2, i * 3}; });
            writes = i;
        }
    });
    while (writes < 1000) std::this_thread::yield();  // reads must overlap writes
    uint64_t reads = 0, torn = 0;
    for (int i = 0; i < 200000; i++) {
        Payload out{};
        if (s.read(&out)) {
            reads++;
            if (out.b != out.a * 2 || out.c != out.a * 3) torn++;
        }
    }
    stop = true;
    writer.join();
    EXPECT_GT(reads, 0u);
    EXPECT_EQ(torn, 0u);
}

}  // namespace
