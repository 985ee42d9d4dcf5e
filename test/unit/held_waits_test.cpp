#include "held_waits.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace {

using namespace psw;

std::vector<std::pair<uint16_t, uint64_t>> drained(HeldWaits &h) {
    std::vector<std::pair<uint16_t, uint64_t>> out;
    h.drain([&](uint16_t idx, uint64_t ns) { out.emplace_back(idx, ns); });
    return out;
}

TEST(HeldWaits, FirstWaitSetsStartAndKey) {
    HeldWaits h;
    EXPECT_TRUE(h.empty());
    EXPECT_TRUE(h.hold(77, 3, 1000, 50));
    EXPECT_TRUE(h.hold(99, 4, 2000, 60));  // a later key does not replace the first
    EXPECT_FALSE(h.empty());
    EXPECT_EQ(h.count(), 2);
    EXPECT_EQ(h.start_ns(), 1000);
    EXPECT_EQ(h.key(), 77u);
}

TEST(HeldWaits, DrainGivesEachWaitInOrderAndEmpties) {
    HeldWaits h;
    h.hold(1, 5, 10, 100);
    h.hold(1, 5, 20, 200);  // the same event twice stays two waits
    h.hold(1, 2, 30, 300);
    auto got = drained(h);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], std::make_pair(uint16_t{5}, uint64_t{100}));
    EXPECT_EQ(got[1], std::make_pair(uint16_t{5}, uint64_t{200}));
    EXPECT_EQ(got[2], std::make_pair(uint16_t{2}, uint64_t{300}));
    EXPECT_TRUE(h.empty());
    EXPECT_TRUE(drained(h).empty());
    // Refilled after a drain: a new start and key.
    h.hold(8, 1, 500, 5);
    EXPECT_EQ(h.start_ns(), 500);
    EXPECT_EQ(h.key(), 8u);
}

TEST(HeldWaits, FullRefusesWithoutLosingWhatItHolds) {
    HeldWaits h;
    for (int i = 0; i < HeldWaits::kMax; i++) EXPECT_TRUE(h.hold(1, 1, i, 1));
    EXPECT_FALSE(h.hold(1, 1, 999, 1));
    EXPECT_EQ(h.count(), HeldWaits::kMax);
    EXPECT_EQ(drained(h).size(), static_cast<size_t>(HeldWaits::kMax));
}

TEST(HeldWaits, TextKeyTellsTextsApartAndIgnoresWhereTheyLive) {
    char copy[] = "SELECT count(*) FROM t";
    EXPECT_EQ(held_text_key("SELECT count(*) FROM t"), held_text_key(copy));
    EXPECT_NE(held_text_key("SELECT count(*) FROM t"), held_text_key("SELECT count(*) FROM u"));
    EXPECT_NE(held_text_key(""), held_text_key(" "));
}

}  // namespace
