#include "minute_buckets.h"

#include <algorithm>
#include <cstring>

namespace psw {

size_t MinuteBuckets::bytes(uint32_t nbuckets) {
    return sizeof(Header) + static_cast<size_t>(nbuckets) * sizeof(Bucket) +
           FixedHashTable<MinuteKey>::bytes(kScratchKeys) + kScratchKeys * sizeof(MinuteRow);
}

MinuteBuckets::Bucket *MinuteBuckets::bucket(uint32_t i) const {
    return reinterpret_cast<Bucket *>(reinterpret_cast<char *>(header_) + sizeof(Header)) + i;
}

FixedHashTable<MinuteKey> MinuteBuckets::scratch() const {
    return FixedHashTable<MinuteKey>(reinterpret_cast<char *>(header_) + sizeof(Header) +
                                     static_cast<size_t>(header_->nbuckets) * sizeof(Bucket));
}

MinuteRow *MinuteBuckets::sort_buffer() const {
    return reinterpret_cast<MinuteRow *>(reinterpret_cast<char *>(header_) + sizeof(Header) +
                                         static_cast<size_t>(header_->nbuckets) * sizeof(Bucket) +
                                         FixedHashTable<MinuteKey>::bytes(kScratchKeys));
}

void MinuteBuckets::init(uint32_t nbuckets) {
    std::memset(static_cast<void *>(header_), 0, sizeof(Header) + static_cast<size_t>(nbuckets) * sizeof(Bucket));
    header_->nbuckets = nbuckets;
    header_->current.minute = -1;
    for (uint32_t i = 0; i < nbuckets; i++) bucket(i)->minute = -1;
    scratch().init(kScratchKeys);
    std::memset(static_cast<void *>(sort_buffer()), 0, kScratchKeys * sizeof(MinuteRow));
}

void MinuteBuckets::add_to_scratch(const MinuteKey &key, uint64_t n) {
    FixedHashTable<MinuteKey> t = scratch();
    if (t.add(key, n, kScratchKeys - kScratchReserve)) return;
    MinuteKey other{};
    other.wait = key.wait == kWaitCatchAll ? kWaitCatchAll : (key.wait | kWaitOtherQueries);
    if (t.add(other, n, kScratchKeys - 1)) return;
    MinuteKey all{};
    all.wait = kWaitCatchAll;
    t.add(all, n, kScratchKeys);  // the last key is always left for the catch-all
}

// Folds the least used regular keys into their wait's "other" row while the
// scratch table is near its limit: bounded work (kEvictVisits slots), no
// allocation, totals unchanged.
void MinuteBuckets::evict_scratch() {
    FixedHashTable<MinuteKey> t = scratch();
    if (t.used() <= kEvictAbove) return;
    struct Folded {
        MinuteKey key;
        uint64_t count;
    };
    Folded folded[kEvictVisits];  // one eviction per visit at most
    size_t nfolded = 0;
    uint64_t n = t.evict(
        kEvictAbove, kEvictVisits,
        [](const MinuteKey &k) { return (k.wait & kWaitOtherQueries) == 0 && k.wait != kWaitCatchAll; },
        [&](const MinuteKey &k, uint64_t c) {
            if (nfolded < kEvictVisits) folded[nfolded++] = Folded{k, c};
        });
    for (size_t i = 0; i < nfolded; i++) {
        MinuteKey other{};
        other.wait = folded[i].key.wait | kWaitOtherQueries;
        if (!t.add(other, folded[i].count, kScratchKeys - 1)) {
            MinuteKey all{};
            all.wait = kWaitCatchAll;
            t.add(all, folded[i].count, kScratchKeys);
        }
    }
    if (n) __atomic_store_n(&header_->evicted, header_->evicted + n, __ATOMIC_RELAXED);
}

void MinuteBuckets::close_current() {
    Bucket &cur = header_->current;
    if (cur.minute < 0) return;
    // The sort buffer is preallocated in the region: closing a minute happens
    // inside the writer's sequence section and must not allocate (an
    // exception there would leave the counter odd for good).
    MinuteRow *const rows_begin = sort_buffer();
    size_t nrows = 0;
    scratch().for_each([&](const MinuteKey &k, uint64_t c) {
        if (nrows < kScratchKeys) rows_begin[nrows++] = MinuteRow{k.queryid, k.wait, static_cast<uint32_t>(c)};
    });
    struct Rows {
        MinuteRow *b;
        size_t n;
        MinuteRow *begin() const { return b; }
        MinuteRow *end() const { return b + n; }
        size_t size() const { return n; }
        MinuteRow &operator[](size_t i) const { return b[i]; }
    } rows{rows_begin, nrows};
    // Largest first; ties broken by key so compaction is deterministic.
    // (std::sort sorts in place: no allocation.)
    std::sort(rows.begin(), rows.end(), [](const MinuteRow &a, const MinuteRow &b) {
        if (a.count != b.count) return a.count > b.count;
        if (a.wait != b.wait) return a.wait < b.wait;
        return a.queryid < b.queryid;
    });

    Bucket *b = bucket(static_cast<uint32_t>(cur.minute % header_->nbuckets));
    b->seq.write_begin();
    b->minute = cur.minute;
    b->ticks = cur.ticks;
    b->samples = cur.samples;
    const uint32_t keep = kBucketKeys - kOtherRows;
    uint32_t n = 0;
    size_t i = 0;
    for (; i < rows.size() && n < keep; i++) {
        if ((rows[i].wait & kWaitOtherQueries) != 0 || rows[i].wait == kWaitCatchAll) continue;
        b->rows[n++] = rows[i];
        rows[i].count = 0;  // taken
    }
    // Fold what is left into per-wait "other" rows, then the catch-all.
    const uint32_t top_n = n;
    uint32_t catch_all = 0;
    for (size_t j = 0; j < rows.size(); j++) {
        if (rows[j].count == 0) continue;
        uint32_t wait = rows[j].wait == kWaitCatchAll ? kWaitCatchAll : (rows[j].wait | kWaitOtherQueries);
        if (wait == kWaitCatchAll) {
            catch_all += rows[j].count;
            continue;
        }
        uint32_t r = top_n;
        while (r < n && b->rows[r].wait != wait) r++;
        if (r < n) {
            b->rows[r].count += rows[j].count;
        } else if (n < kBucketKeys - 1) {
            b->rows[n++] = MinuteRow{0, wait, rows[j].count};
        } else {
            catch_all += rows[j].count;
        }
    }
    if (catch_all > 0) b->rows[n++] = MinuteRow{0, kWaitCatchAll, catch_all};
    b->nrows = n;
    b->seq.write_end();

    scratch().clear();
    cur.minute = -1;
    cur.ticks = 0;
    cur.samples = 0;
}

void MinuteBuckets::tick(int64_t minute, const MinuteKey *keys, size_t n) {
    Bucket &cur = header_->current;
    cur.seq.write_begin();
    if (cur.minute != minute) {
        close_current();
        cur.minute = minute;
    }
    for_each_run(keys, n, [&](const MinuteKey &k, uint64_t count) { add_to_scratch(k, count); });
    evict_scratch();
    cur.ticks++;
    cur.samples += n;
    cur.seq.write_end();
}

void MinuteBuckets::clear() {
    Bucket &cur = header_->current;
    cur.seq.write_begin();
    for (uint32_t i = 0; i < header_->nbuckets; i++) {
        Bucket *b = bucket(i);
        if (b->minute < 0) continue;
        b->seq.write_begin();
        b->minute = -1;
        b->nrows = 0;
        b->ticks = 0;
        b->samples = 0;
        b->seq.write_end();
    }
    scratch().clear();
    __atomic_store_n(&header_->evicted, 0, __ATOMIC_RELAXED);
    cur.minute = -1;
    cur.ticks = 0;
    cur.samples = 0;
    cur.seq.write_end();
}

uint64_t MinuteBuckets::move(int64_t minute, uint32_t wait, uint64_t from_queryid, uint64_t to_queryid, uint64_t n) {
    if (n == 0 || from_queryid == to_queryid || (wait & kWaitOtherQueries) != 0 || wait == kWaitCatchAll) return 0;
    // Where samples of (from_queryid, wait) may have been counted: their
    // own key, else folded into the wait's "other" row, else the catch-all.
    MinuteKey from[3] = {};
    from[0].queryid = from_queryid;
    from[0].wait = wait;
    from[1].wait = wait | kWaitOtherQueries;
    from[2].wait = kWaitCatchAll;
    MinuteKey to{};
    to.queryid = to_queryid;
    to.wait = wait;
    uint64_t moved = 0;

    Bucket &cur = header_->current;
    if (cur.minute == minute) {
        cur.seq.write_begin();
        FixedHashTable<MinuteKey> t = scratch();
        for (const MinuteKey &k : from) moved += t.take(k, n - moved);
        if (moved > 0) add_to_scratch(to, moved);
        cur.seq.write_end();
        return moved;
    }

    Bucket *b = bucket(static_cast<uint32_t>(minute % header_->nbuckets));
    if (b->minute != minute) return 0;  // recycled, or never closed
    auto find = [&](const MinuteKey &k) -> int {
        for (uint32_t i = 0; i < b->nrows; i++)
            if (b->rows[i].queryid == k.queryid && b->rows[i].wait == k.wait) return static_cast<int>(i);
        return -1;
    };
    // A closed minute has a fixed number of rows: a new row needs room, else
    // the samples go to the wait's "other" row or the catch-all, else stay.
    int to_row = find(to);
    if (to_row < 0 && b->nrows >= kBucketKeys) {
        to_row = find(from[1]);
        if (to_row < 0) to_row = find(from[2]);
        if (to_row < 0) return 0;
    }
    b->seq.write_begin();
    for (const MinuteKey &k : from) {
        int r = find(k);
        if (r < 0 || moved == n) continue;
        uint32_t take = static_cast<uint32_t>(std::min<uint64_t>(b->rows[r].count, n - moved));
        b->rows[r].count -= take;
        moved += take;
    }
    if (moved > 0) {
        if (to_row >= 0) {
            b->rows[to_row].count += static_cast<uint32_t>(moved);
        } else {
            // Before the "other" rows and the catch-all, as closing lays them out.
            uint32_t at = 0;
            while (at < b->nrows && (b->rows[at].wait & kWaitOtherQueries) == 0 && b->rows[at].wait != kWaitCatchAll) at++;
            std::memmove(&b->rows[at + 1], &b->rows[at], (b->nrows - at) * sizeof(MinuteRow));
            b->rows[at] = MinuteRow{to_queryid, wait, static_cast<uint32_t>(moved)};
            b->nrows++;
        }
        // Rows taken to zero go (closing never leaves an empty row).
        uint32_t w = 0;
        for (uint32_t i = 0; i < b->nrows; i++)
            if (b->rows[i].count != 0) b->rows[w++] = b->rows[i];
        b->nrows = w;
    }
    b->seq.write_end();
    return moved;
}

bool MinuteBuckets::check(int64_t max_minute, bool (*wait_ok)(uint32_t wait), const char **why) const {
    auto row_wait_ok = [&](uint32_t wait) { return wait == kWaitCatchAll || wait_ok(wait & ~kWaitOtherQueries); };
    auto minute_ok = [&](const Bucket &b) {
        if (b.seq.seq % 2 != 0)
            *why = "a minute was saved while being written";
        else if (b.minute < -1 || b.minute > max_minute)
            *why = "a minute lies outside the clock's range";
        else if (b.minute == -1 && (b.samples != 0 || b.ticks != 0))
            *why = "an empty minute has samples";
        else
            return true;
        return false;
    };
    for (uint32_t i = 0; i < header_->nbuckets; i++) {
        const Bucket &b = *bucket(i);
        if (!minute_ok(b)) return false;
        if (b.minute == -1 ? b.nrows != 0 : (b.minute % header_->nbuckets != i || b.nrows > kBucketKeys)) {
            *why = "a minute's rows do not fit its bucket";
            return false;
        }
        uint64_t sum = 0;
        for (uint32_t r = 0; r < b.nrows; r++) {
            if (!row_wait_ok(b.rows[r].wait)) {
                *why = "a minute has a row of an unknown wait event";
                return false;
            }
            sum += b.rows[r].count;  // at most kBucketKeys 32-bit counts: no overflow
        }
        if (sum != b.samples) {
            *why = "a minute's rows do not add up to its samples";
            return false;
        }
    }
    const Bucket &cur = header_->current;
    if (!minute_ok(cur)) return false;
    uint64_t total = 0;
    if (!scratch().intact(kScratchKeys, &total) || total != cur.samples) {
        *why = "the current minute's table is damaged or does not add up to its samples";
        return false;
    }
    bool waits_ok = true;
    scratch().for_each([&](const MinuteKey &k, uint64_t) { waits_ok = waits_ok && row_wait_ok(k.wait); });
    if (!waits_ok) *why = "the current minute has a row of an unknown wait event";
    return waits_ok;
}

int64_t MinuteBuckets::oldest_minute() const {
    int64_t oldest = -1;
    for (uint32_t i = 0; i < header_->nbuckets; i++) {
        int64_t m = __atomic_load_n(&bucket(i)->minute, __ATOMIC_RELAXED);
        if (m >= 0 && (oldest < 0 || m < oldest)) oldest = m;
    }
    return oldest;
}

bool MinuteBuckets::read(int64_t from_minute, std::vector<MinuteCopy> *out) const {
    bool complete = true;
    out->clear();
    // The current minute first: if it closes while the buckets are read, its
    // closed copy is found below and replaces this one (never counted twice,
    // never missed).
    MinuteCopy cur;
    bool have_cur = false;
    {
        const Bucket &c = header_->current;
        FixedHashTable<MinuteKey> t = scratch();
        bool ok = c.seq.read(
            [&] {
                cur.rows.clear();
                cur.minute = c.minute;
                cur.ticks = c.ticks;
                cur.samples = c.samples;
                t.for_each([&](const MinuteKey &k, uint64_t cnt) {
                    cur.rows.push_back(MinuteRow{k.queryid, k.wait, static_cast<uint32_t>(cnt)});
                });
            },
            1000);
        if (!ok) complete = false;
        have_cur = ok && cur.minute >= 0 && cur.minute >= from_minute;
    }
    for (uint32_t i = 0; i < header_->nbuckets; i++) {
        const Bucket *b = bucket(i);
        if (__atomic_load_n(&b->minute, __ATOMIC_RELAXED) < from_minute) continue;
        MinuteCopy m;
        bool ok = b->seq.read(
            [&] {
                m.minute = b->minute;
                m.ticks = b->ticks;
                m.samples = b->samples;
                uint32_t n = std::min(b->nrows, kBucketKeys);
                m.rows.assign(b->rows, b->rows + n);
            },
            1000);
        if (!ok) {
            complete = false;
            continue;
        }
        if (m.minute < from_minute) continue;
        if (have_cur && m.minute == cur.minute) have_cur = false;
        out->push_back(std::move(m));
    }
    if (have_cur) out->push_back(std::move(cur));
    std::sort(out->begin(), out->end(), [](const MinuteCopy &a, const MinuteCopy &b) { return a.minute < b.minute; });
    return complete;
}

}  // namespace psw
