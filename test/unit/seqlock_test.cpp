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

// The copy goes by 8-, 4- or 1-byte words depending on the payload's
// layout; each width must copy every byte.
struct Words4 {
    uint32_t a;
    uint16_t b;
    uint16_t c;
    uint32_t d;
};
struct Bytes3 {
    unsigned char a[3];
};

TEST(SeqLock, CopiesEveryByteAtEachWordWidth) {
    psw::SeqLocked<Words4> w;
    w.init();
    w.write([](Words4 &p) { p = {0x01020304u, 0x0506, 0x0708, 0x090a0b0cu}; });
    Words4 wo{};
    ASSERT_TRUE(w.read(&wo));
    EXPECT_EQ(wo.a, 0x01020304u);
    EXPECT_EQ(wo.b, 0x0506);
    EXPECT_EQ(wo.c, 0x0708);
    EXPECT_EQ(wo.d, 0x090a0b0cu);

    psw::SeqLocked<Bytes3> b;
    b.init();
    b.write([](Bytes3 &p) { p = {{1, 2, 3}}; });
    Bytes3 bo{};
    ASSERT_TRUE(b.read(&bo));
    EXPECT_EQ(bo.a[0], 1);
    EXPECT_EQ(bo.a[2], 3);
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
