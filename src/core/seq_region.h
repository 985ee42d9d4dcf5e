// A sequence counter guarding a whole region (a table) that one writer at a
// time mutates in place while readers copy it without locks.
//
// Why: the sampled profile and the current minute change every tick; readers
// copy them (hundreds of kilobytes) and must never make the sampler wait. The
// writer bumps the counter to odd before a batch of updates and to even after;
// a reader copies, then retries if the counter moved. PostgreSQL-free.
#pragma once

#include <cstdint>

namespace psw {

struct SeqRegion {
    uint32_t seq;

    void write_begin() {
        uint32_t s = __atomic_load_n(&seq, __ATOMIC_RELAXED);
        __atomic_store_n(&seq, s + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
    }
    void write_end() {
        uint32_t s = __atomic_load_n(&seq, __ATOMIC_RELAXED);
        __atomic_store_n(&seq, s + 1, __ATOMIC_RELEASE);
    }
    // Reader: returns the counter to pass to validate(), or false via *ok
    // when a write is in progress.
    uint32_t read_begin(bool *ok) const {
        uint32_t s = __atomic_load_n(&seq, __ATOMIC_ACQUIRE);
        *ok = (s & 1u) == 0;
        return s;
    }
    bool validate(uint32_t begin) const {
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        return __atomic_load_n(&seq, __ATOMIC_RELAXED) == begin;
    }

    // Copies with copy() until a copy is consistent, at most tries times.
    template <typename Copy>
    bool read(Copy &&copy, int tries) const {
        for (int i = 0; i < tries; i++) {
            bool ok;
            uint32_t s = read_begin(&ok);
            if (!ok) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
                continue;
            }
            copy();
            if (validate(s)) return true;
        }
        return false;
    }
};

}  // namespace psw
