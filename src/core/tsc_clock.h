// A monotonic nanosecond clock read with one RDTSC instead of a vDSO
// clock_gettime, for the timed path of the blocking-call wrappers.
//
// Why: two clock readings per timed call are most of its cost, and on
// virtual machines clock_gettime(CLOCK_MONOTONIC) costs ~40 ns against
// ~20 ns for RDTSC. Used only where the CPU says its TSC is invariant
// (constant rate, runs in every C-state); the rate is calibrated against
// CLOCK_MONOTONIC once, in the postmaster, and inherited by every child, so
// all processes agree on the time base. Elsewhere the caller falls back to
// clock_gettime. PostgreSQL-free.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace psw {

struct TscClock {
    bool usable;
    uint64_t base_tsc;
    int64_t base_ns;   // CLOCK_MONOTONIC at base_tsc
    uint64_t mult;     // ns per tick << 32
};

// True when the CPU reports an invariant TSC (CPUID 0x80000007 EDX bit 8).
bool tsc_invariant();
// True when the kernel's clocksource is the TSC (it checked the TSC is
// synchronized across CPUs and stable); read from sysfs.
bool kernel_clocksource_is_tsc();
// Measures the TSC rate against CLOCK_MONOTONIC over about window_ms.
// Leaves c->usable false when the TSC is not invariant or the result is
// implausible.
void tsc_calibrate(TscClock *c, int window_ms);

// CLOCK_MONOTONIC in ns, out of line (calibration, the sampler, readers).
int64_t monotonic_ns();

// The same reading for the timed paths, where the TSC is not used (a VM
// whose clocksource is kvm-clock): inlined, a reading is a call to
// clock_gettime and no more (the call to monotonic_ns() and its frame cost
// 13 instructions a reading). Its timespec is one static buffer, not a
// local: a local whose address is taken gives every function this is
// inlined into a stack-protector canary, paid on every call even where the
// TSC is used. So only for single-threaded processes (PostgreSQL's), and
// never from a signal handler (which could overwrite the buffer between
// clock_gettime and the reads below).
inline int64_t monotonic_ns_inline() {
    static struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t tsc_clock_ns(const TscClock &c) {
#if defined(__x86_64__)
    if (__builtin_expect(c.usable, 1)) {
        uint64_t d = __rdtsc() - c.base_tsc;
        return c.base_ns + static_cast<int64_t>((static_cast<unsigned __int128>(d) * c.mult) >> 32);
    }
#endif
    return monotonic_ns_inline();
}

}  // namespace psw
