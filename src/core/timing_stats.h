// Exact-timing counters, PostgreSQL-free (docs/architecture.md, "A timed wait").
//
// Three layers, each with one job:
//  - LocalTiming: a backend's private accumulator, filled by the blocking-call
//    wrappers with plain adds (no atomics, no locks, no allocation);
//  - SharedEvents: per-(backend type, wait event) totals in shared memory,
//    updated with atomic adds when a backend flushes; readers copy them under
//    a multi-writer version check so calls and histogram agree, without ever
//    blocking writers;
//  - QueryTable: fixed-capacity, lock-free open-addressing table of
//    (queryid, datid, userid, wait index, backend type) -> calls, total ns.
//    Writers claim a free slot with one CAS; what does not fit is counted,
//    never blocks. Room is made by an evictor (one process, never a backend)
//    that frees the least used entries in bounded steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "wait_catalog.h"

namespace psw {

// Capacity of every per-event array; wait_index_count() must not exceed it
// (a unit test checks).
constexpr uint16_t kMaxWaitIndex = kWaitIndexLimit;

// Backend types (PostgreSQL's BackendType values) kept apart in the exact
// tables, so that e.g. PostgreSQL 18's io workers' reads are not mixed with
// the client backends' waits. Larger values are counted under type 0.
constexpr uint8_t kMaxBackendTypes = 24;

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
        add_to(ev[idx], idx, ns);
        if (attribute) {
            q_calls[idx]++;
            q_ns[idx] += ns;
        }
    }
    // A call of ns under idx, outside any query: e is ev[idx], its address
    // kept by a caller that adds to one index again and again.
    void add_to(EventCounters &e, uint16_t idx, uint64_t ns) {
        // The bound only matters if a foreign thread raced us into the
        // wrapper (PostgreSQL backends are single-threaded): never overflow.
        if (e.calls == 0 && ntouched < kMaxWaitIndex) touched[ntouched++] = idx;
        e.calls++;
        e.total_ns += ns;
        if (ns > e.max_ns) e.max_ns = ns;
        e.hist[hist_bucket(ns)]++;
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

// Per-(backend type, event) totals in shared memory. A backend type's row is
// marked in types_mask on its first flush, so readers copy only the rows in
// use (a few of kMaxBackendTypes).
struct SharedEvents {
    uint64_t begun;       // flushes started (version for readers)
    uint32_t active;      // flushes in progress
    uint32_t types_mask;  // bit per backend type that ever flushed
    EventCounters ev[kMaxBackendTypes][kMaxWaitIndex];

    void init();
    // Writer side: wrap a flush's adds in begin()/end().
    void begin();
    void end();
    void add(uint8_t backend_type, uint16_t idx, const EventCounters &c);
    // Copies a consistent snapshot (no flush overlapped it) of the rows of
    // every backend type in use: out[t * count + i] for event i of type t
    // (out holds kMaxBackendTypes * count entries; rows of types not in
    // *types are left as they were). After max_tries racing flushes it
    // returns the last copy anyway and false.
    bool snapshot(EventCounters *out, uint16_t count, uint32_t *types, int max_tries = 100) const;
    void reset();
};

struct QueryKey {
    uint64_t queryid;
    uint32_t datid;
    uint32_t userid;
    uint16_t index;
    uint8_t backend_type;
};

// state: epoch (24 bits) | generation (16) | pins (22) | kind (2).
//  - kind: kFree, kClaiming (a writer fills the key), kReady.
//  - pins: writers adding to the entry right now. The evictor frees only an
//    unpinned entry (one CAS on the whole word), so an add never lands in a
//    slot that was freed and reclaimed by another key meanwhile.
//  - generation: bumped at every claim, so a reader can tell that the slot
//    changed hands while it copied it.
//  - epoch: a reset bumps the table's epoch; entries of older epochs are free.
struct QueryEntry {
    uint64_t state;
    uint64_t queryid;
    uint32_t datid;
    uint32_t userid;
    uint16_t index;
    uint8_t backend_type;
    uint8_t usage;  // clock usage for eviction (racy by design)
    uint32_t pad;
    uint64_t calls;
    uint64_t total_ns;
};

struct QueryRow {
    QueryKey key;
    uint64_t calls;
    uint64_t total_ns;
};

// Lock-free table over caller-provided (shared) memory. A slot is free when
// its kind is kFree or it belongs to an older epoch, so reset() is one store.
// A writer that finds a slot being claimed moves on, and a writer may claim a
// slot freed by eviction before a later copy of its key, so a key can appear
// twice; readers aggregate by key.
//
// Eviction (evict_step) is for one process at a time that backends never
// wait for (the sampler): a clock hand lowers each entry's usage, which every
// add raises, and frees entries it finds unused and unpinned. Backends never
// evict: their path stays a few atomic operations.
struct QueryTable {
    enum : uint64_t { kFree = 0, kClaiming = 1, kReady = 2 };
    static constexpr uint64_t kKindMask = 3;
    static constexpr uint64_t kPin = 1ULL << 2;
    static constexpr uint64_t kPinsMask = ((1ULL << 22) - 1) << 2;
    static constexpr uint64_t kGen = 1ULL << 24;
    static constexpr uint64_t kGenMask = 0xFFFFULL << 24;
    static constexpr int kEpochShift = 40;
    static constexpr uint32_t kEpochMask = (1u << 24) - 1;
    static constexpr int kMaxProbes = 64;
    static constexpr uint8_t kMaxUsage = 8;

    uint32_t capacity;  // power of two
    uint32_t epoch;     // 24 bits used
    uint64_t dropped;   // flush records that found no slot
    int64_t live;       // entries claimed minus entries evicted in this epoch (approximate)
    uint64_t evicted;   // entries evicted since init/reset
    uint64_t hand;      // evictor's clock hand (evictor only)
    uint64_t pad;
    QueryEntry entries[1];  // capacity entries follow

    static size_t bytes(uint32_t capacity);
    static uint32_t round_capacity(uint32_t wanted);  // next power of two, >= 16
    void init(uint32_t capacity);
    // Adds to the key's counters; false (and dropped++) when it does not fit.
    bool add(const QueryKey &k, uint64_t calls, uint64_t ns);
    void reset();
    uint64_t dropped_count() const { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }
    uint64_t evicted_count() const { return __atomic_load_n(&evicted, __ATOMIC_RELAXED); }
    // Evictor: while more than target entries are live, visits at most
    // max_visits slots with the clock hand. Returns entries evicted.
    uint64_t evict_step(uint64_t target, uint64_t max_visits);
    // Calls f(const QueryRow &) for every ready entry of the current epoch
    // (duplicates of a key possible).
    template <typename F>
    void for_each(F &&f) const {
        uint64_t ep = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE) & kEpochMask;
        for (uint32_t i = 0; i < capacity; i++) {
            const QueryEntry &e = entries[i];
            for (int attempt = 0; attempt < 3; attempt++) {
                uint64_t st = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
                if ((st >> kEpochShift) != ep || (st & kKindMask) != kReady) break;
                QueryRow r;
                r.key.queryid = __atomic_load_n(&e.queryid, __ATOMIC_RELAXED);
                r.key.datid = __atomic_load_n(&e.datid, __ATOMIC_RELAXED);
                r.key.userid = __atomic_load_n(&e.userid, __ATOMIC_RELAXED);
                r.key.index = __atomic_load_n(&e.index, __ATOMIC_RELAXED);
                r.key.backend_type = __atomic_load_n(&e.backend_type, __ATOMIC_RELAXED);
                r.calls = __atomic_load_n(&e.calls, __ATOMIC_RELAXED);
                r.total_ns = __atomic_load_n(&e.total_ns, __ATOMIC_RELAXED);
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                uint64_t st2 = __atomic_load_n(&e.state, __ATOMIC_RELAXED);
                // Pins come and go without touching the key; anything else
                // means the slot was evicted (and maybe reclaimed) meanwhile.
                if (((st ^ st2) & ~kPinsMask) != 0) continue;
                f(r);
                break;
            }
        }
    }
    uint32_t used() const;
};

// Persistence (pg_stat/pg_stat_waits.stat is written by the caller, which
// owns the file): a self-describing block — magic, format version, sizes —
// so a file from another build is refused rather than misread.
// index_count is wait_index_count() of the writing build. Format 2 keys
// every row by backend type; a block of format 1 is refused.
bool timing_save(FILE *f, const SharedEvents &ev, const QueryTable &qt, uint16_t index_count);
// Reads a block written by timing_save and adds it to ev/qt. Returns false
// (and leaves the tables as they were if the header is wrong) on mismatch
// or truncation; the file position is then unspecified.
bool timing_load(FILE *f, SharedEvents *ev, QueryTable *qt, uint16_t index_count);
// Reads a block as timing_load would and says what in it the counters could
// not have reached (a count or time out of bigint's range, a histogram that
// does not add up to its calls, a wait index or a backend type at or above
// backend_types unknown to this server), or nullptr when it is plausible.
// Why apart from timing_load: the caller checks the whole block before
// anything is added, and reports the reason.
const char *timing_check(FILE *f, uint16_t index_count, uint32_t backend_types);

}  // namespace psw
