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
        // The copy may race a writer; the sequence check afterwards discards it.
        // A volatile byte copy keeps the compiler from assuming the data is stable.
        const volatile unsigned char *src = reinterpret_cast<const volatile unsigned char *>(&data);
        unsigned char *dst = reinterpret_cast<unsigned char *>(out);
        for (size_t i = 0; i < sizeof(T); i++) dst[i] = src[i];
    }
};

}  // namespace psw
