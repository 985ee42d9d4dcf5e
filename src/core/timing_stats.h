// Exact-timing counters (DESIGN.md §4 "Exact timing"), PostgreSQL-free.
//
// Three layers, each with one job:
//  - LocalTiming: a backend's private accumulator, filled by the blocking-call
//    wrappers with plain adds (no atomics, no locks, no allocation);
//  - SharedEvents: per-wait-event totals in shared memory, updated with atomic
//    adds when a backend flushes; readers copy them under a multi-writer
//    version check so calls and histogram agree, without ever blocking writers;
//  - QueryTable: fixed-capacity, lock-free open-addressing table of
//    (queryid, datid, userid, wait index) -> calls, total ns. Writers claim a
//    free slot with one CAS; what does not fit is counted, never blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "wait_catalog.h"

namespace psw {

// Capacity of every per-event array; wait_index_count() must not exceed it
// (a unit test checks).
constexpr uint16_t kMaxWaitIndex = kWaitIndexLimit;

// log2 duration histogram: bucket 0 holds calls shorter than 1024 ns, bucket
// b >= 1 holds [2^(b+9), 2^(b+10)) ns; the last bucket is open-ended.
constexpr int kHistBuckets = 32;

inline int hist_bucket(uint64_t ns) {
    if (ns < 1024) return 0;
    int b = 63 - __builtin_clzll(ns) - 9;
    return b < kHistBuckets ? b : kHistBuckets - 1;
}
// Bounds of bucket b in nanoseconds; *hi_ns is +infinity for the last bucket.
void hist_bucket_bounds_ns(int b, double *lo_ns, double *hi_ns);

struct EventCounters {
    uint64_t calls;
    uint64_t total_ns;
    uint64_t max_ns;
    uint64_t hist[kHistBuckets];
};

// A backend's private accumulator since its last flush.
struct LocalTiming {
    EventCounters ev[kMaxWaitIndex];
    // The part of ev[] attributed to the statement being timed.
    uint64_t q_calls[kMaxWaitIndex];
    uint64_t q_ns[kMaxWaitIndex];
    uint16_t touched[kMaxWaitIndex];
    uint16_t ntouched;

    void add(uint16_t idx, uint64_t ns, bool attribute) {
        EventCounters &e = ev[idx];
        // The bound only matters if a foreign thread raced us into the
        // wrapper (PostgreSQL backends are single-threaded): never overflow.
        if (e.calls == 0 && ntouched < kMaxWaitIndex) touched[ntouched++] = idx;
        e.calls++;
        e.total_ns += ns;
        if (ns > e.max_ns) e.max_ns = ns;
        e.hist[hist_bucket(ns)]++;
        if (attribute) {
            q_calls[idx]++;
            q_ns[idx] += ns;
        }
    }
    bool pending() const { return ntouched != 0; }

    // Hands every touched index to f(idx, counters, q_calls, q_ns), then
    // clears what it handed over.
    template <typename F>
    void drain(F &&f) {
        for (uint16_t i = 0; i < ntouched; i++) {
            uint16_t idx = touched[i];
            f(idx, ev[idx], q_calls[idx], q_ns[idx]);
            ev[idx] = EventCounters{};
            q_calls[idx] = 0;
            q_ns[idx] = 0;
        }
        ntouched = 0;
    }
};

// Per-event totals in shared memory.
struct SharedEvents {
    uint64_t begun;   // flushes started (version for readers)
    uint32_t active;  // flushes in progress
    uint32_t pad;
    EventCounters ev[kMaxWaitIndex];

    void init();
    // Writer side: wrap a flush's adds in begin()/end().
    void begin();
    void end();
    void add(uint16_t idx, const EventCounters &c);
    // Copies a consistent snapshot (no flush overlapped it); after max_tries
    // racing flushes it returns the last copy anyway and false.
    bool snapshot(EventCounters *out, uint16_t count, int max_tries = 100) const;
    void reset();
};

struct QueryKey {
    uint64_t queryid;
    uint32_t datid;
    uint32_t userid;
    uint16_t index;
};

struct QueryEntry {
    uint32_t state;  // epoch << 2 | kFree/kClaiming/kReady
    uint16_t index;
    uint16_t pad;
    uint32_t datid;
    uint32_t userid;
    uint64_t queryid;
    uint64_t calls;
    uint64_t total_ns;
};

struct QueryRow {
    QueryKey key;
    uint64_t calls;
    uint64_t total_ns;
};

// Lock-free table over caller-provided (shared) memory. A slot is free when
// its state is kFree or belongs to an older epoch, so reset() is one store.
// A writer that finds a slot being claimed moves on, so a key can appear
// twice; readers aggregate by key.
struct QueryTable {
    enum : uint32_t { kFree = 0, kClaiming = 1, kReady = 2 };
    static constexpr int kMaxProbes = 64;

    uint32_t capacity;  // power of two
    uint32_t epoch;
    uint64_t dropped;   // flush records that found no slot
    QueryEntry entries[1];  // capacity entries follow

    static size_t bytes(uint32_t capacity);
    static uint32_t round_capacity(uint32_t wanted);  // next power of two, >= 16
    void init(uint32_t capacity);
    // Adds to the key's counters; false (and dropped++) when it does not fit.
    bool add(const QueryKey &k, uint64_t calls, uint64_t ns);
    void reset();
    uint64_t dropped_count() const { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }
    // Calls f(const QueryRow &) for every ready entry of the current epoch
    // (duplicates of a key possible).
    template <typename F>
    void for_each(F &&f) const {
        uint32_t ep = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < capacity; i++) {
            const QueryEntry &e = entries[i];
            uint32_t st = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
            if (st != ((ep << 2) | kReady)) continue;
            QueryRow r;
            r.key.queryid = e.queryid;
            r.key.datid = e.datid;
            r.key.userid = e.userid;
            r.key.index = e.index;
            r.calls = __atomic_load_n(&e.calls, __ATOMIC_RELAXED);
            r.total_ns = __atomic_load_n(&e.total_ns, __ATOMIC_RELAXED);
            f(r);
        }
    }
    uint32_t used() const;
};

// Persistence (pg_stat/pg_stat_waits.stat is written by the caller, which
// owns the file): a self-describing block — magic, format version, sizes —
// so a file from another build is refused rather than misread.
// index_count is wait_index_count() of the writing build.
bool timing_save(FILE *f, const SharedEvents &ev, const QueryTable &qt, uint16_t index_count);
// Reads a block written by timing_save and adds it to ev/qt. Returns false
// (and leaves the tables as they were if the header is wrong) on mismatch
// or truncation; the file position is then unspecified.
bool timing_load(FILE *f, SharedEvents *ev, QueryTable *qt, uint16_t index_count);

}  // namespace psw
