// Single-writer sequence lock for trivially copyable payloads in shared memory.
//
// Why a seqlock: a backend publishes its state on every statement boundary and
// must never wait for a reader (the sampler or a SQL function). The writer only
// bumps a counter around plain stores; readers retry if they raced a write.
// PostgreSQL-free so it can be unit-tested on its own.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "seq_region.h"

namespace psw {

template <typename T>
struct SeqLocked {
    static_assert(std::is_trivially_copyable<T>::value, "shared memory holds trivially copyable data");

    SeqRegion seq;  // odd while a write is in progress
    T data;

    void init() {
        seq.seq = 0;
        std::memset(static_cast<void *>(&data), 0, sizeof(T));
    }

    // Writer side: only the owning process may call these.
    void write_begin() { seq.write_begin(); }
    void write_end() { seq.write_end(); }
    template <typename F>
    void write(F &&mutate) {
        write_begin();
        mutate(data);
        write_end();
    }

    // Reader side: copies a consistent snapshot into *out. Gives up after
    // max_tries racing writes (a writer that died mid-write leaves seq odd
    // forever; readers must not hang on it) and returns false then.
    bool read(T *out, int max_tries = 1000) const {
        return seq.read([&] { copy_racy(out); }, max_tries);
    }

private:
    void copy_racy(T *out) const {
        // The copy may race a writer; the sequence check afterwards discards
        // it. Relaxed atomic loads make the racing reads well-defined; whole
        // words when the layout allows (a byte loop over a 32-byte slot was a
        // tenth of the sampler's CPU at 1000 backends).
        if constexpr (alignof(T) >= 8 && sizeof(T) % 8 == 0) {
            copy_words<uint64_t>(out);
        } else if constexpr (alignof(T) >= 4 && sizeof(T) % 4 == 0) {
            copy_words<uint32_t>(out);
        } else {
            copy_words<unsigned char>(out);
        }
    }
    template <typename W>
    void copy_words(T *out) const {
        const W *src = reinterpret_cast<const W *>(&data);
        W *dst = reinterpret_cast<W *>(out);
        for (size_t i = 0; i < sizeof(T) / sizeof(W); i++) dst[i] = __atomic_load_n(src + i, __ATOMIC_RELAXED);
    }
};

}  // namespace psw
