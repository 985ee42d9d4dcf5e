#include "timing_stats.h"

#include "query_rows.h"
#include "wait_catalog.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace psw {

void hist_bucket_bounds_ns(int b, double *lo_ns, double *hi_ns) {
    *lo_ns = b == 0 ? 0.0 : std::ldexp(1.0, b + 9);
    *hi_ns = b >= kHistBuckets - 1 ? std::numeric_limits<double>::infinity() : std::ldexp(1.0, b + 10);
}

// ---- SharedEvents ---------------------------------------------------------

void SharedEvents::init() { std::memset(static_cast<void *>(this), 0, sizeof(*this)); }

void SharedEvents::begin() {
    __atomic_fetch_add(&active, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&begun, 1, __ATOMIC_SEQ_CST);
}

void SharedEvents::end() { __atomic_fetch_sub(&active, 1, __ATOMIC_SEQ_CST); }

void SharedEvents::add(uint8_t backend_type, uint16_t idx, const EventCounters &c) {
    if (idx >= kMaxWaitIndex || c.calls == 0) return;
    if (backend_type >= kMaxBackendTypes) backend_type = 0;
    uint32_t bit = 1u << backend_type;
    if ((__atomic_load_n(&types_mask, __ATOMIC_RELAXED) & bit) == 0) __atomic_fetch_or(&types_mask, bit, __ATOMIC_SEQ_CST);
    EventCounters &e = ev[backend_type][idx];
    __atomic_fetch_add(&e.calls, c.calls, __ATOMIC_RELAXED);
    __atomic_fetch_add(&e.total_ns, c.total_ns, __ATOMIC_RELAXED);
    for (int b = 0; b < kHistBuckets; b++)
        if (c.hist[b]) __atomic_fetch_add(&e.hist[b], c.hist[b], __ATOMIC_RELAXED);
    uint64_t cur = __atomic_load_n(&e.max_ns, __ATOMIC_RELAXED);
    while (c.max_ns > cur &&
           !__atomic_compare_exchange_n(&e.max_ns, &cur, c.max_ns, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

bool SharedEvents::snapshot(EventCounters *out, uint16_t count, uint32_t *types, int max_tries) const {
    if (count > kMaxWaitIndex) count = kMaxWaitIndex;
    const size_t words = count * (sizeof(EventCounters) / sizeof(uint64_t));
    for (int t = 0; t < max_tries; t++) {
        uint64_t b1 = __atomic_load_n(&begun, __ATOMIC_SEQ_CST);
        uint32_t a1 = __atomic_load_n(&active, __ATOMIC_SEQ_CST);
        uint32_t mask = __atomic_load_n(&types_mask, __ATOMIC_SEQ_CST);
        for (uint32_t bt = 0; bt < kMaxBackendTypes; bt++) {
            if ((mask & (1u << bt)) == 0) continue;
            const uint64_t *src = reinterpret_cast<const uint64_t *>(ev[bt]);
            uint64_t *dst = reinterpret_cast<uint64_t *>(out + static_cast<size_t>(bt) * count);
            for (size_t i = 0; i < words; i++) dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
        }
        *types = mask;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uint32_t a2 = __atomic_load_n(&active, __ATOMIC_SEQ_CST);
        uint64_t b2 = __atomic_load_n(&begun, __ATOMIC_SEQ_CST);
        if (a1 == 0 && a2 == 0 && b1 == b2) return true;
    }
    return false;
}

void SharedEvents::reset() {
    uint64_t *w = reinterpret_cast<uint64_t *>(ev);
    size_t words = sizeof(ev) / sizeof(uint64_t);
    for (size_t i = 0; i < words; i++) __atomic_store_n(&w[i], 0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&begun, 1, __ATOMIC_SEQ_CST);  // readers racing the reset retry
}

// ---- QueryTable -----------------------------------------------------------

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t key_hash(const QueryKey &k) {
    return mix64(k.queryid ^ mix64((static_cast<uint64_t>(k.datid) << 32 | k.userid) ^
                                   (static_cast<uint64_t>(k.index) << 17) ^ (static_cast<uint64_t>(k.backend_type) << 40)));
}

namespace {

inline uint64_t st_kind(uint64_t st) { return st & QueryTable::kKindMask; }
inline uint64_t st_pins(uint64_t st) { return st & QueryTable::kPinsMask; }
inline uint64_t st_epoch(uint64_t st) { return st >> QueryTable::kEpochShift; }
inline uint64_t st_make(uint64_t epoch, uint64_t gen_bits, uint64_t kind) {
    return (epoch << QueryTable::kEpochShift) | (gen_bits & QueryTable::kGenMask) | kind;
}

// Racy key comparison; callers confirm it once the entry is pinned.
inline bool same_key(const QueryEntry &e, const QueryKey &k) {
    return __atomic_load_n(&e.queryid, __ATOMIC_RELAXED) == k.queryid &&
           __atomic_load_n(&e.datid, __ATOMIC_RELAXED) == k.datid &&
           __atomic_load_n(&e.userid, __ATOMIC_RELAXED) == k.userid &&
           __atomic_load_n(&e.index, __ATOMIC_RELAXED) == k.index &&
           __atomic_load_n(&e.backend_type, __ATOMIC_RELAXED) == k.backend_type;
}

inline void bump_usage(QueryEntry &e) {
    uint8_t u = __atomic_load_n(&e.usage, __ATOMIC_RELAXED);
    if (u < QueryTable::kMaxUsage) __atomic_store_n(&e.usage, static_cast<uint8_t>(u + 1), __ATOMIC_RELAXED);
}

}  // namespace

size_t QueryTable::bytes(uint32_t capacity) {
    return offsetof(QueryTable, entries) + static_cast<size_t>(capacity) * sizeof(QueryEntry);
}

uint32_t QueryTable::round_capacity(uint32_t wanted) {
    uint32_t c = 16;
    while (c < wanted && c < (1u << 30)) c <<= 1;
    return c;
}

void QueryTable::init(uint32_t cap) {
    std::memset(static_cast<void *>(this), 0, bytes(cap));
    capacity = cap;
    epoch = 1;
}

bool QueryTable::add(const QueryKey &k, uint64_t calls, uint64_t ns) {
    const uint64_t ep = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE) & kEpochMask;
    const uint32_t mask = capacity - 1;
    uint64_t h = key_hash(k);
    int probes = capacity < static_cast<uint32_t>(kMaxProbes) ? static_cast<int>(capacity) : kMaxProbes;
    for (int p = 0; p < probes; p++) {
        QueryEntry &e = entries[(h + p) & mask];
        uint64_t st = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
        for (;;) {
            const bool current = st_epoch(st) == ep;
            if (current && st_kind(st) == kReady) {
                if (!same_key(e, k)) break;  // another key: next slot
                // Pin, so the evictor cannot free the entry under the add.
                if (!__atomic_compare_exchange_n(&e.state, &st, st + kPin, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                    continue;  // st reloaded: look again
                bool mine = same_key(e, k);  // stable while pinned
                if (mine) {
                    __atomic_fetch_add(&e.calls, calls, __ATOMIC_RELAXED);
                    __atomic_fetch_add(&e.total_ns, ns, __ATOMIC_RELAXED);
                    bump_usage(e);
                }
                __atomic_fetch_sub(&e.state, kPin, __ATOMIC_RELEASE);
                if (mine) return true;
                break;
            }
            // Being claimed (any epoch: the claimer will publish it), or a
            // writer of an older epoch is still adding to it: never wait.
            if (st_kind(st) == kClaiming || st_pins(st) != 0) break;
            // Free, or left over from before the last reset: claim it.
            uint64_t claiming = st_make(ep, (st & kGenMask) + kGen, kClaiming);
            if (__atomic_compare_exchange_n(&e.state, &st, claiming, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&e.queryid, k.queryid, __ATOMIC_RELAXED);
                __atomic_store_n(&e.datid, k.datid, __ATOMIC_RELAXED);
                __atomic_store_n(&e.userid, k.userid, __ATOMIC_RELAXED);
                __atomic_store_n(&e.index, k.index, __ATOMIC_RELAXED);
                __atomic_store_n(&e.backend_type, k.backend_type, __ATOMIC_RELAXED);
                __atomic_store_n(&e.usage, static_cast<uint8_t>(1), __ATOMIC_RELAXED);
                __atomic_store_n(&e.calls, calls, __ATOMIC_RELAXED);
                __atomic_store_n(&e.total_ns, ns, __ATOMIC_RELAXED);
                __atomic_store_n(&e.state, st_make(ep, claiming, kReady), __ATOMIC_RELEASE);
                __atomic_fetch_add(&live, 1, __ATOMIC_RELAXED);
                return true;
            }
            // st now holds what another writer put there; look again.
        }
    }
    __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
    return false;
}

uint64_t QueryTable::evict_step(uint64_t target, uint64_t max_visits) {
    const uint64_t ep = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE) & kEpochMask;
    const uint32_t mask = capacity - 1;
    uint64_t i = hand & mask;
    uint64_t n = 0;
    // At most one turn of the hand per step (see FixedHashTable::evict).
    if (max_visits > capacity) max_visits = capacity;
    for (uint64_t v = 0; v < max_visits; v++, i = (i + 1) & mask) {
        if (__atomic_load_n(&live, __ATOMIC_RELAXED) <= static_cast<int64_t>(target)) break;
        QueryEntry &e = entries[i];
        uint64_t st = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
        if (st_epoch(st) != ep || st_kind(st) != kReady) continue;
        uint8_t u = __atomic_load_n(&e.usage, __ATOMIC_RELAXED);
        if (u > 0) {
            __atomic_store_n(&e.usage, static_cast<uint8_t>(u - 1), __ATOMIC_RELAXED);
            continue;
        }
        if (st_pins(st) != 0) continue;  // a writer is adding right now: it is in use
        // Unpinned and ready: free it in one step; a writer that pins it
        // afterwards fails its CAS and looks again.
        if (__atomic_compare_exchange_n(&e.state, &st, st_make(ep, st, kFree), false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            __atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
            n++;
        }
    }
    hand = i;
    if (n) __atomic_fetch_add(&evicted, n, __ATOMIC_RELAXED);
    return n;
}

void QueryTable::reset() {
    uint32_t e = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
    uint32_t next = (e + 1) & kEpochMask;
    if (next == 0) next = 1;
    __atomic_store_n(&epoch, next, __ATOMIC_RELEASE);
    __atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&evicted, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&live, 0, __ATOMIC_RELAXED);
}

uint32_t QueryTable::used() const {
    uint32_t n = 0;
    for_each([&](const QueryRow &) { n++; });
    return n;
}

// ---- persistence ----------------------------------------------------------

namespace {

const char kMagic[8] = {'P', 'S', 'W', 'T', 'I', 'M', 'E', '\0'};
const char kEndMagic[8] = {'P', 'S', 'W', 'T', 'E', 'N', 'D', '\0'};
// 2: rows and event totals keyed by backend type; counters of evictions.
// 3: a CPU row holds the statement's CPU time; in 2 it held its elapsed
// time, and a file of 2 is loaded by taking the waits out (query_rows.h).
constexpr uint32_t kFormatVersion = 3;
constexpr uint32_t kFormatElapsedCpuRows = 2;

struct SavedRow {
    uint64_t queryid;
    uint32_t datid;
    uint32_t userid;
    uint32_t index;
    uint32_t backend_type;
    uint64_t calls;
    uint64_t total_ns;
};

bool put(FILE *f, const void *p, size_t n) { return std::fwrite(p, 1, n, f) == n; }
bool get(FILE *f, void *p, size_t n) { return std::fread(p, 1, n, f) == n; }

// version, index_count, histogram buckets, row size, rows, backend type mask
constexpr int kHeaderWords = 6;

}  // namespace

bool timing_save(FILE *f, const SharedEvents &ev, const QueryTable &qt, uint16_t index_count) {
    if (index_count > kMaxWaitIndex) return false;
    std::vector<EventCounters> events(static_cast<size_t>(kMaxBackendTypes) * index_count);
    uint32_t types = 0;
    ev.snapshot(events.data(), index_count, &types);
    std::vector<SavedRow> rows;
    qt.for_each([&](const QueryRow &r) {
        SavedRow s{};
        s.queryid = r.key.queryid;
        s.datid = r.key.datid;
        s.userid = r.key.userid;
        s.index = r.key.index;
        s.backend_type = r.key.backend_type;
        s.calls = r.calls;
        s.total_ns = r.total_ns;
        rows.push_back(s);
    });
    uint32_t header[kHeaderWords] = {kFormatVersion, index_count, static_cast<uint32_t>(kHistBuckets),
                                     static_cast<uint32_t>(sizeof(SavedRow)), static_cast<uint32_t>(rows.size()),
                                     types};
    uint64_t counters[2] = {qt.dropped_count(), qt.evicted_count()};
    if (!put(f, kMagic, sizeof(kMagic)) || !put(f, header, sizeof(header)) || !put(f, counters, sizeof(counters)))
        return false;
    for (uint32_t t = 0; t < kMaxBackendTypes; t++)
        if ((types & (1u << t)) != 0 &&
            !put(f, events.data() + static_cast<size_t>(t) * index_count, index_count * sizeof(EventCounters)))
            return false;
    return put(f, rows.data(), rows.size() * sizeof(SavedRow)) && put(f, kEndMagic, sizeof(kEndMagic));
}

namespace {

// A block as read, before anything is added to the tables.
struct Block {
    uint32_t format;
    uint32_t types;
    uint64_t counters[2];  // dropped, evicted
    std::vector<EventCounters> events;  // kMaxBackendTypes * index_count
    std::vector<SavedRow> rows;
};

// Reads a block's layout; false when it is not one of this build's.
bool read_block(FILE *f, uint16_t index_count, Block *b) {
    char magic[8];
    uint32_t header[kHeaderWords];
    if (!get(f, magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(magic)) != 0) return false;
    if (!get(f, header, sizeof(header))) return false;
    b->format = header[0];
    if ((b->format != kFormatVersion && b->format != kFormatElapsedCpuRows) || header[1] != index_count ||
        header[2] != kHistBuckets || header[3] != sizeof(SavedRow) || header[4] > (1u << 26))
        return false;
    if (!get(f, b->counters, sizeof(b->counters))) return false;
    b->types = kMaxBackendTypes >= 32 ? header[5] : header[5] & ((1u << kMaxBackendTypes) - 1);
    if (b->types != header[5]) return false;
    b->events.assign(static_cast<size_t>(kMaxBackendTypes) * index_count, EventCounters{});
    for (uint32_t t = 0; t < kMaxBackendTypes; t++)
        if ((b->types & (1u << t)) != 0 &&
            !get(f, b->events.data() + static_cast<size_t>(t) * index_count, index_count * sizeof(EventCounters)))
            return false;
    b->rows.resize(header[4]);
    if (!get(f, b->rows.data(), b->rows.size() * sizeof(SavedRow))) return false;
    return get(f, magic, sizeof(magic)) && std::memcmp(magic, kEndMagic, sizeof(magic)) == 0;
}

constexpr uint64_t kInt64Max = static_cast<uint64_t>(INT64_MAX);

// What the writer could not have produced, or nullptr: the views show
// counters as bigint and times as double, so a count or time at or above
// 2^63 would show negative; the histogram sums to the calls and its highest
// bucket holds the longest call, which is within the total.
const char *event_problem(const EventCounters &e) {
    if (e.calls > kInt64Max || e.total_ns > kInt64Max) return "an event's calls or time are out of range";
    uint64_t sum = 0;
    int top = -1;
    for (int b = 0; b < kHistBuckets; b++) {
        if (__builtin_add_overflow(sum, e.hist[b], &sum)) return "an event's histogram overflows";
        if (e.hist[b] != 0) top = b;
    }
    if (sum != e.calls) return "an event's histogram does not add up to its calls";
    if (e.calls == 0 ? (e.total_ns != 0 || e.max_ns != 0) : (e.max_ns > e.total_ns || hist_bucket(e.max_ns) != top))
        return "an event's longest call does not fit its total or histogram";
    return nullptr;
}

const char *block_problem(const Block &b, uint16_t index_count, uint32_t backend_types) {
    if (b.counters[0] > kInt64Max || b.counters[1] > kInt64Max) return "the dropped or evicted count is out of range";
    for (uint32_t t = 0; t < kMaxBackendTypes; t++) {
        if ((b.types & (1u << t)) == 0) continue;
        if (t >= backend_types) return "an event row has an unknown backend type";
        for (uint16_t i = 0; i < index_count; i++) {
            const char *p = event_problem(b.events[static_cast<size_t>(t) * index_count + i]);
            if (p != nullptr) return p;
        }
    }
    for (const SavedRow &r : b.rows) {
        if (r.index >= index_count) return "a per-query row has an unknown wait event";
        if (r.backend_type >= backend_types || r.backend_type >= kMaxBackendTypes)
            return "a per-query row has an unknown backend type";
        if (r.calls > kInt64Max || r.total_ns > kInt64Max) return "a per-query row's calls or time are out of range";
    }
    return nullptr;
}

}  // namespace

const char *timing_check(FILE *f, uint16_t index_count, uint32_t backend_types) {
    Block b;
    if (!read_block(f, index_count, &b)) return "the block does not match this build's layout or is truncated";
    return block_problem(b, index_count, backend_types);
}

bool timing_load(FILE *f, SharedEvents *ev, QueryTable *qt, uint16_t index_count) {
    Block b;
    if (!read_block(f, index_count, &b)) return false;
    const uint32_t format = b.format, types = b.types;
    const std::vector<EventCounters> &events = b.events;
    const std::vector<SavedRow> &rows = b.rows;
    const uint64_t *counters = b.counters;
    ev->begin();
    for (uint32_t t = 0; t < kMaxBackendTypes; t++)
        if ((types & (1u << t)) != 0)
            for (uint16_t i = 0; i < index_count; i++)
                ev->add(static_cast<uint8_t>(t), i, events[static_cast<size_t>(t) * index_count + i]);
    ev->end();
    auto row_of = [](const SavedRow &r) {
        QueryRow q{};
        q.key = QueryKey{r.queryid, r.datid, r.userid, static_cast<uint16_t>(r.index),
                         static_cast<uint8_t>(r.backend_type)};
        q.calls = r.calls;
        q.total_ns = r.total_ns;
        return q;
    };
    auto fits = [&](const SavedRow &r) { return r.index < index_count && r.backend_type < kMaxBackendTypes; };
    if (format == kFormatElapsedCpuRows) {
        // Its CPU rows are converted on a copy, grouped by statement; a block
        // of the current format is added as it is, without one (the saved
        // rows alone can be over a gigabyte at the largest profile_max).
        std::vector<QueryRow> loaded;
        for (const SavedRow &r : rows)
            if (fits(r)) loaded.push_back(row_of(r));
        uint32_t n = finish_query_rows(loaded.data(), static_cast<uint32_t>(loaded.size()), index_is_cpu_work);
        cpu_rows_from_elapsed(loaded.data(), n, wait_index(0));
        for (uint32_t i = 0; i < n; i++) qt->add(loaded[i].key, loaded[i].calls, loaded[i].total_ns);
    } else {
        for (const SavedRow &r : rows) {
            if (!fits(r)) continue;
            const QueryRow q = row_of(r);
            qt->add(q.key, q.calls, q.total_ns);
        }
    }
    __atomic_fetch_add(&qt->dropped, counters[0], __ATOMIC_RELAXED);
    __atomic_fetch_add(&qt->evicted, counters[1], __ATOMIC_RELAXED);
    return true;
}

}  // namespace psw
