#include "node_waits.h"

#include <gtest/gtest.h>

namespace {

using psw::NodeWaits;
using psw::summarize_node_waits;

TEST(NodeWaits, AddsPerEventAndKeepsOverflowInOther) {
    NodeWaits w;
    w.clear();
    EXPECT_TRUE(w.empty());
    w.add(7, 1, 100);
    w.add(3, 1, 10);
    w.add(7, 2, 50);
    ASSERT_EQ(w.size(), 2);
    EXPECT_EQ(w.at(0).index, 7);
    EXPECT_EQ(w.at(0).calls, 3u);
    EXPECT_EQ(w.at(0).ns, 150u);
    for (uint16_t i = 100; i < 100 + NodeWaits::kEvents; i++) w.add(i, 1, 1);
    EXPECT_EQ(w.size(), NodeWaits::kEvents);
    EXPECT_EQ(w.other_calls(), 2u);  // the two events past the room
    EXPECT_EQ(w.other_ns(), 2u);
    // An event already kept still adds to itself when the table is full.
    w.add(3, 1, 5);
    EXPECT_EQ(w.at(1).ns, 15u);
}

TEST(NodeWaits, SummaryIsHeaviestFirstAndSumsTheRest) {
    NodeWaits w;
    w.clear();
    w.add(1, 1, 10);
    w.add(2, 4, 300);
    w.add(3, 2, 20);
    w.add(4, 1, 20);
    auto s = summarize_node_waits(w, 2);
    ASSERT_EQ(s.n, 2);
    EXPECT_EQ(s.top[0].index, 2);
    // Same time: more calls first.
    EXPECT_EQ(s.top[1].index, 3);
    EXPECT_EQ(s.rest_calls, 2u);
    EXPECT_EQ(s.rest_ns, 30u);
    // One event left over is shown as itself.
    auto t = summarize_node_waits(w, 3);
    EXPECT_EQ(t.n, 4);
    EXPECT_EQ(t.rest_calls, 0u);
}

}  // namespace
