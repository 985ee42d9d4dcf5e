#include "window_agg.h"

#include <gtest/gtest.h>

namespace {

TEST(TopAgg, OrdersBySamplesAndComputesPercent) {
    psw::TopAgg a;
    a.add(1, 30);
    a.add(2, 60);
    a.add(3, 10);
    auto r = a.result(2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].wait, 2u);
    EXPECT_DOUBLE_EQ(r[0].pct, 60.0);
    EXPECT_EQ(r[1].wait, 1u);
    EXPECT_DOUBLE_EQ(r[1].pct, 30.0);
    EXPECT_EQ(a.total(), 100u);
}

TEST(TimelineAgg, AlignsBucketsToTheWidth) {
    psw::TimelineAgg t(10);
    t.add(3, 1, 1);
    t.add(9, 1, 1);
    t.add(10, 1, 1);
    t.add(15, 2, 5);
    t.add(-1, 1, 1);
    auto r = t.result();
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(r[0].bucket_start, -10);
    EXPECT_EQ(r[1].bucket_start, 0);
    EXPECT_EQ(r[1].samples, 2u);
    EXPECT_EQ(r[2].bucket_start, 10);
    EXPECT_EQ(r[2].wait, 2u);  // larger first within a bucket
    EXPECT_EQ(r[3].wait, 1u);
}

}  // namespace
