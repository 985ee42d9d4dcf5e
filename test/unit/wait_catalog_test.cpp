#include "wait_catalog.h"

#include <gtest/gtest.h>

#include <set>

namespace {

using namespace psw;

TEST(WaitCatalog, CpuIsIndexZeroAndNamed) {
    EXPECT_EQ(wait_index(0), 0);
    ASSERT_NE(wait_class_by_id(kClassCPU), nullptr);
    EXPECT_STREQ(wait_class_by_id(kClassCPU)->name, "CPU");
}

TEST(WaitCatalog, Pg15ClassSizes) {
    EXPECT_EQ(wait_class_by_id(kClassLWLock)->events, 75);
    EXPECT_EQ(wait_class_by_id(kClassLock)->events, 11);
    EXPECT_EQ(wait_class_by_id(kClassIPC)->events, 52);
    EXPECT_EQ(wait_class_by_id(kClassIO)->events, 74);
    EXPECT_EQ(wait_class_by_name("Timeout")->id, kClassTimeout);
    EXPECT_EQ(wait_class_by_name("NoSuchClass"), nullptr);
    EXPECT_EQ(wait_class_by_id(0x02), nullptr);  // PG 15 has no class 0x02
}

TEST(WaitCatalog, EveryKnownEventRoundTrips) {
    std::set<uint16_t> seen;
    for (int i = 0; i < wait_class_count(); i++) {
        const WaitClassInfo &c = wait_class_at(i);
        if (c.id == kClassCPU || c.id == kClassUnreported) continue;
        for (uint16_t ev = 0; ev < c.events; ev++) {
            uint16_t idx = wait_index(wait_info_make(c.id, ev));
            ASSERT_LT(idx, wait_index_count());
            EXPECT_TRUE(seen.insert(idx).second) << c.name << " " << ev;
            uint8_t cls;
            uint16_t back;
            bool other;
            ASSERT_TRUE(wait_index_decode(idx, &cls, &back, &other));
            EXPECT_EQ(cls, c.id);
            EXPECT_EQ(back, ev);
            EXPECT_FALSE(other);
        }
    }
}

TEST(WaitCatalog, UnknownIdsFallIntoTheirClassOtherSlot) {
    // Extension LWLock tranches have ids past LWTRANCHE_FIRST_USER_DEFINED.
    uint16_t a = wait_index(wait_info_make(kClassLWLock, 75));
    uint16_t b = wait_index(wait_info_make(kClassLWLock, 4000));
    EXPECT_EQ(a, b);
    uint8_t cls;
    uint16_t ev;
    bool other;
    ASSERT_TRUE(wait_index_decode(a, &cls, &ev, &other));
    EXPECT_EQ(cls, kClassLWLock);
    EXPECT_TRUE(other);
    // An unknown class byte gets the single catch-all slot, distinct from all others.
    uint16_t unknown = wait_index(0x7F000001u);
    EXPECT_NE(unknown, a);
    EXPECT_EQ(unknown, wait_index_count() - 1);
}

TEST(WaitCatalog, UnreportedCallsHaveDistinctSlots) {
    std::set<uint16_t> seen;
    for (int c = 0; c < kBlockingCallCount; c++) {
        uint16_t idx = unreported_index(static_cast<BlockingCall>(c));
        EXPECT_TRUE(seen.insert(idx).second);
        uint8_t cls;
        uint16_t ev;
        bool other;
        ASSERT_TRUE(wait_index_decode(idx, &cls, &ev, &other));
        EXPECT_EQ(cls, kClassUnreported);
        EXPECT_EQ(ev, c);
    }
    EXPECT_EQ(blocking_call_from_name("pread"), kCallPread);
    EXPECT_STREQ(blocking_call_name(kCallEpollWait), "epoll_wait");
    EXPECT_EQ(blocking_call_from_name("open"), kBlockingCallCount);
}

TEST(WaitCatalog, DecodeRejectsOutOfRange) {
    uint8_t cls;
    uint16_t ev;
    bool other;
    EXPECT_FALSE(wait_index_decode(wait_index_count(), &cls, &ev, &other));
}

}  // namespace
