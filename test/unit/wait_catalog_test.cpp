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

// The layout a PostgreSQL 18 server reports at preload (sizes measured on
// 18.6; any sizes must work).
const WaitClassSize kPg18Like[] = {
    {kClassLWLock, 100 + 64}, {kClassLock, 12},      {kClassBufferPin, 1},        {kClassActivity, 18},
    {kClassClient, 9},        {kClassExtension, 128}, {kClassIPC, 58},             {kClassTimeout, 10},
    {kClassIO, 81},           {kClassInjectionPoint, 128},
};

TEST(WaitCatalog, InitTakesTheServersSizes) {
    ASSERT_TRUE(wait_catalog_init(kPg18Like, sizeof(kPg18Like) / sizeof(kPg18Like[0])));
    EXPECT_EQ(wait_class_by_id(kClassIO)->events, 81);
    EXPECT_EQ(wait_class_by_id(kClassInjectionPoint)->events, 128);
    EXPECT_STREQ(wait_class_by_id(kClassInjectionPoint)->name, "InjectionPoint");
    // WALSync (IO id 76 on 18) and an extension's run-time event (id 5)
    // get their own slots, not their class's "other".
    uint8_t cls;
    uint16_t ev;
    bool other;
    uint16_t walsync = wait_index(wait_info_make(kClassIO, 76));
    ASSERT_TRUE(wait_index_decode(walsync, &cls, &ev, &other));
    EXPECT_EQ(cls, kClassIO);
    EXPECT_EQ(ev, 76);
    EXPECT_FALSE(other);
    uint16_t ext = wait_index(wait_info_make(kClassExtension, 5));
    ASSERT_TRUE(wait_index_decode(ext, &cls, &ev, &other));
    EXPECT_EQ(cls, kClassExtension);
    EXPECT_EQ(ev, 5);
    EXPECT_FALSE(other);
    EXPECT_NE(wait_index(wait_info_make(kClassExtension, 128)), ext);
    EXPECT_EQ(wait_index(wait_info_make(kClassExtension, 128)), wait_other_index(kClassExtension));
    EXPECT_LE(wait_index_count(), kWaitIndexLimit);
    // CPU stays index 0 and Unreported keeps one slot per call.
    EXPECT_EQ(wait_index(0), 0);
    EXPECT_EQ(wait_class_by_id(kClassUnreported)->events, kBlockingCallCount);
    wait_catalog_init_pg15();
}

// PostgreSQL 19 calls class 0x04 "Buffer" (buffer content locks joined the
// pin waits there); the server's name replaces the catalog's, by id and by
// name, and the next init without a name puts the catalog's back.
TEST(WaitCatalog, InitTakesARenamedClassesName) {
    const WaitClassSize pg19[] = {{kClassLWLock, 101 + 64}, {kClassBufferPin, 4, "Buffer"}, {kClassIO, 83, "IO"}};
    ASSERT_TRUE(wait_catalog_init(pg19, 3));
    EXPECT_STREQ(wait_class_by_id(kClassBufferPin)->name, "Buffer");
    EXPECT_EQ(wait_class_by_id(kClassBufferPin)->events, 4);
    ASSERT_NE(wait_class_by_name("Buffer"), nullptr);
    EXPECT_EQ(wait_class_by_name("Buffer")->id, kClassBufferPin);
    EXPECT_EQ(wait_class_by_name("BufferPin"), nullptr);
    EXPECT_STREQ(wait_class_by_id(kClassLWLock)->name, "LWLock");  // no name given: the catalog's
    uint8_t cls;
    uint16_t ev;
    bool other;
    ASSERT_TRUE(wait_index_decode(wait_index(wait_info_make(kClassBufferPin, 3)), &cls, &ev, &other));
    EXPECT_EQ(cls, kClassBufferPin);
    EXPECT_EQ(ev, 3);
    EXPECT_FALSE(other);
    wait_catalog_init_pg15();
    EXPECT_STREQ(wait_class_by_id(kClassBufferPin)->name, "BufferPin");
}

TEST(WaitCatalog, InitIgnoresSizesForSyntheticClassesAndCutsWhatDoesNotFit) {
    const WaitClassSize huge[] = {{kClassCPU, 500}, {kClassUnreported, 3}, {kClassLWLock, 900}, {kClassIO, 900}};
    EXPECT_FALSE(wait_catalog_init(huge, 4));
    EXPECT_EQ(wait_class_by_id(kClassCPU)->events, 1);
    EXPECT_EQ(wait_class_by_id(kClassUnreported)->events, kBlockingCallCount);
    EXPECT_EQ(wait_class_by_id(kClassLWLock)->events, 900);
    EXPECT_LT(wait_class_by_id(kClassIO)->events, 900);
    EXPECT_EQ(wait_index_count(), kWaitIndexLimit);
    // Every index still decodes, and ids past a cut class land in "other".
    EXPECT_EQ(wait_index(wait_info_make(kClassIO, 899)), wait_other_index(kClassIO));
    for (uint16_t i = 0; i < wait_index_count(); i++) {
        uint8_t cls;
        uint16_t ev;
        bool other;
        EXPECT_TRUE(wait_index_decode(i, &cls, &ev, &other)) << i;
    }
    wait_catalog_init_pg15();
}

TEST(WaitCatalog, ClassesPostgreSqlLacksHaveOnlyTheirOtherSlot) {
    // On 15 and 16 there is no InjectionPoint class: its ids go to its
    // "other" slot, never to another class's row.
    wait_catalog_init_pg15();
    EXPECT_EQ(wait_class_by_id(kClassInjectionPoint)->events, 0);
    uint16_t ip = wait_index(wait_info_make(kClassInjectionPoint, 1));
    EXPECT_EQ(ip, wait_other_index(kClassInjectionPoint));
    uint8_t cls;
    uint16_t ev;
    bool other;
    ASSERT_TRUE(wait_index_decode(ip, &cls, &ev, &other));
    EXPECT_EQ(cls, kClassInjectionPoint);
    EXPECT_TRUE(other);
}

TEST(WaitCatalog, DecodeRejectsOutOfRange) {
    uint8_t cls;
    uint16_t ev;
    bool other;
    EXPECT_FALSE(wait_index_decode(wait_index_count(), &cls, &ev, &other));
}

}  // namespace
