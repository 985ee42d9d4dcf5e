#include "tsc_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace {

using namespace psw;

TEST(TscClock, AgreesWithClockMonotonic) {
    TscClock c{};
    tsc_calibrate(&c, 20);
    if (!tsc_invariant() || !kernel_clocksource_is_tsc()) {
        EXPECT_FALSE(c.usable);
        GTEST_SKIP() << (tsc_invariant() ? "the kernel's clocksource is not the TSC"
                                         : "the CPU reports no invariant TSC")
                     << ": the wrappers use clock_gettime";
    }
    ASSERT_TRUE(c.usable);
    // Same time base right away, and the same rate over a longer interval.
    EXPECT_NEAR(static_cast<double>(tsc_clock_ns(c) - monotonic_ns()), 0.0, 50000.0);
    int64_t a = tsc_clock_ns(c), ma = monotonic_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int64_t b = tsc_clock_ns(c), mb = monotonic_ns();
    double rel = static_cast<double>((b - a) - (mb - ma)) / static_cast<double>(mb - ma);
    EXPECT_LT(rel < 0 ? -rel : rel, 1e-3) << "TSC rate off by " << rel * 100 << "%";
    // Monotonic over consecutive reads.
    int64_t prev = tsc_clock_ns(c);
    for (int i = 0; i < 100000; i++) {
        int64_t now = tsc_clock_ns(c);
        ASSERT_GE(now, prev);
        prev = now;
    }
}

TEST(TscClock, FallsBackWhenNotUsable) {
    TscClock c{};
    c.usable = false;
    int64_t m = monotonic_ns();
    EXPECT_NEAR(static_cast<double>(tsc_clock_ns(c) - m), 0.0, 1e6);
}

}  // namespace
