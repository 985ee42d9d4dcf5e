// Per-minute counts of (wait event, queryid) samples for the last 24 hours
// (and then some), in a fixed memory budget.
//
// Why this shape: the history ring holds minutes to hours of raw samples; the
// per-minute buckets answer "what happened at 03:12" a day later. The current
// minute is counted exactly in a scratch hash table (up to kScratchKeys keys);
// when the minute ends it is compacted into a fixed bucket of kBucketKeys rows:
// the top (kBucketKeys - kOtherRows) keys by samples are kept exactly, the
// rest are folded into one "other queryids" row per wait event, and if even
// those do not fit, into one catch-all row. Totals per minute stay exact, and
// totals per wait event stay exact unless more than kOtherRows - 1 distinct
// wait events fall outside the top keys in one minute.
//
// Within the minute, the scratch table evicts (folds into the per-wait
// "other" row, totals unchanged) its least used keys when it nears its limit,
// so a query that starts late in a busy minute still gets its own row.
//
// One writer (the sampler, or a reset) at a time; readers copy each bucket
// under its own sequence counter, so closed minutes (immutable until they are
// recycled a day later) never make a reader retry. The writer allocates
// nothing: the buffer that closing a minute sorts lives in the region, so no
// exception can leave a sequence counter odd. PostgreSQL-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fixed_hash.h"
#include "seq_region.h"

namespace psw {

// Marks a row that aggregates queryids not kept individually: the wait event
// stays in the low bits (PostgreSQL leaves bits 16..23 of wait_event_info unused).
constexpr uint32_t kWaitOtherQueries = 0x00800000u;
// The catch-all row: every wait event, every queryid.
constexpr uint32_t kWaitCatchAll = 0xFFFFFFFFu;

struct MinuteKey {
    uint64_t queryid;
    uint32_t wait;
    uint32_t pad;  // zero (keys are compared bytewise)
};

struct MinuteRow {
    uint64_t queryid;
    uint32_t wait;   // may carry kWaitOtherQueries, or be kWaitCatchAll
    uint32_t count;  // samples
};

class MinuteBuckets {
public:
    static constexpr uint32_t kBucketKeys = 256;
    static constexpr uint32_t kOtherRows = 64;
    static constexpr uint64_t kScratchKeys = 4096;
    static constexpr uint64_t kScratchReserve = 512;  // keys left for "other" rows in the scratch table
    static constexpr uint32_t kDefaultBuckets = 24 * 60 + 1;  // a full day before the current minute
    // Scratch keys (all kinds) above which a tick evicts regular keys, and
    // the most slots one tick's eviction step visits.
    static constexpr uint64_t kEvictAbove = kScratchKeys - kScratchReserve - 256;
    static constexpr uint64_t kEvictVisits = 1024;

    struct Bucket {
        SeqRegion seq;
        uint32_t nrows;
        int64_t minute;  // minutes since the epoch of the caller's clock; -1 when empty
        uint64_t ticks;  // sampler ticks counted in this minute
        uint64_t samples;
        MinuteRow rows[kBucketKeys];
    };
    struct Header {
        uint32_t nbuckets;
        uint32_t pad;
        // Keys of current minutes folded into their "other" row to make room
        // (since init or clear); written under current.seq.
        uint64_t evicted;
        // The current minute lives in the scratch table, guarded by current.seq;
        // current.rows is unused.
        Bucket current;
    };

    static size_t bytes(uint32_t nbuckets);
    MinuteBuckets() = default;
    explicit MinuteBuckets(void *mem) : header_(static_cast<Header *>(mem)) {}

    void init(uint32_t nbuckets);
    uint32_t nbuckets() const { return header_->nbuckets; }

    // Writer: one sampler tick at `minute` with its samples.
    void tick(int64_t minute, const MinuteKey *keys, size_t n);
    // Writer: forgets everything (reset).
    void clear();
    // Writer: re-attributes up to n samples of wait event `wait` counted in
    // `minute` under from_queryid to to_queryid (samples taken before their
    // statement had an id). Samples folded into the wait's "other" row or
    // the catch-all are taken from there. Totals stay as they were; returns
    // how many moved (0 when the minute is gone or its bucket is full).
    uint64_t move(int64_t minute, uint32_t wait, uint64_t from_queryid, uint64_t to_queryid, uint64_t n);

    // Keys evicted from current minutes since init/clear (a racy read).
    uint64_t evicted() const { return __atomic_load_n(&header_->evicted, __ATOMIC_RELAXED); }

    // Reader: every minute >= from_minute, closed buckets and the current
    // minute, each visited once with its rows. Returns false if some bucket
    // could not be copied consistently within the retry budget (it is then
    // left out).
    struct MinuteCopy {
        int64_t minute;
        uint64_t ticks;
        uint64_t samples;
        std::vector<MinuteRow> rows;
    };
    bool read(int64_t from_minute, std::vector<MinuteCopy> *out) const;

    // The oldest closed minute held, -1 when none (a racy hint for choosing
    // between the history ring and the buckets).
    int64_t oldest_minute() const;

    // Raw region, for saving and loading as one block.
    const void *region() const { return header_; }
    size_t region_bytes() const { return bytes(header_->nbuckets); }

    // Whether a region loaded as raw memory holds what this class could have
    // written, at most up to max_minute: every bucket at its minute's
    // position and not being written, its rows within bounds, summing to its
    // samples, each wait accepted by wait_ok (the wait without
    // kWaitOtherQueries; the catch-all is always accepted); the current
    // minute's scratch table intact and summing to its samples. *why says
    // what is wrong when it returns false.
    bool check(int64_t max_minute, bool (*wait_ok)(uint32_t wait), const char **why) const;

private:
    Bucket *bucket(uint32_t i) const;
    FixedHashTable<MinuteKey> scratch() const;
    MinuteRow *sort_buffer() const;  // kScratchKeys rows, the writer's
    void add_to_scratch(const MinuteKey &key, uint64_t n);
    void evict_scratch();
    void close_current();

    Header *header_ = nullptr;
};

}  // namespace psw
