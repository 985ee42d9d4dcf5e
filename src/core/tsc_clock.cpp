#include "tsc_clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstring>

namespace psw {

// Its own canary would cost every statement two (the timespec never
// escapes: clock_gettime only writes it).
#if defined(__has_attribute)
#if __has_attribute(no_stack_protector)
__attribute__((no_stack_protector))
#endif
#endif
int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool kernel_clocksource_is_tsc() {
    FILE *f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f == nullptr) return false;
    char buf[64] = {0};
    bool tsc = std::fgets(buf, sizeof(buf), f) != nullptr && std::strncmp(buf, "tsc", 3) == 0 &&
               (buf[3] == '\n' || buf[3] == '\0');
    std::fclose(f);
    return tsc;
}

bool tsc_invariant() {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return false;
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d)) return false;
    return (d & (1u << 8)) != 0;
#else
    return false;
#endif
}

void tsc_calibrate(TscClock *c, int window_ms) {
    c->usable = false;
#if defined(__x86_64__)
    if (!tsc_invariant() || !kernel_clocksource_is_tsc()) return;
    // Pair each TSC reading with the clock reading that brackets it most
    // tightly (the shortest of a few tries), at both ends of the window.
    auto pair = [](uint64_t *tsc, int64_t *ns) {
        int64_t best = -1;
        for (int i = 0; i < 16; i++) {
            int64_t a = monotonic_ns();
            uint64_t t = __rdtsc();
            int64_t b = monotonic_ns();
            if (best < 0 || b - a < best) {
                best = b - a;
                *tsc = t;
                *ns = a + (b - a) / 2;
            }
        }
    };
    uint64_t t0, t1;
    int64_t n0, n1;
    pair(&t0, &n0);
    struct timespec req = {0, static_cast<long>(window_ms) * 1000000L};
    while (nanosleep(&req, &req) != 0) {
    }
    pair(&t1, &n1);
    if (t1 <= t0 || n1 <= n0) return;
    double ns_per_tick = static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0);
    if (ns_per_tick < 0.01 || ns_per_tick > 10.0) return;  // 100 MHz .. 100 GHz
    c->mult = static_cast<uint64_t>(ns_per_tick * 4294967296.0 + 0.5);
    c->base_tsc = t1;
    c->base_ns = n1;
    c->usable = true;
#endif
}

}  // namespace psw
