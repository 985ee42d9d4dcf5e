#include "timing_stats.h"

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

void SharedEvents::add(uint16_t idx, const EventCounters &c) {
    if (idx >= kMaxWaitIndex || c.calls == 0) return;
    EventCounters &e = ev[idx];
    __atomic_fetch_add(&e.calls, c.calls, __ATOMIC_RELAXED);
    __atomic_fetch_add(&e.total_ns, c.total_ns, __ATOMIC_RELAXED);
    for (int b = 0; b < kHistBuckets; b++)
        if (c.hist[b]) __atomic_fetch_add(&e.hist[b], c.hist[b], __ATOMIC_RELAXED);
    uint64_t cur = __atomic_load_n(&e.max_ns, __ATOMIC_RELAXED);
    while (c.max_ns > cur &&
           !__atomic_compare_exchange_n(&e.max_ns, &cur, c.max_ns, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

bool SharedEvents::snapshot(EventCounters *out, uint16_t count, int max_tries) const {
    if (count > kMaxWaitIndex) count = kMaxWaitIndex;
    for (int t = 0; t < max_tries; t++) {
        uint64_t b1 = __atomic_load_n(&begun, __ATOMIC_SEQ_CST);
        uint32_t a1 = __atomic_load_n(&active, __ATOMIC_SEQ_CST);
        const uint64_t *src = reinterpret_cast<const uint64_t *>(ev);
        uint64_t *dst = reinterpret_cast<uint64_t *>(out);
        size_t words = count * (sizeof(EventCounters) / sizeof(uint64_t));
        for (size_t i = 0; i < words; i++) dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uint32_t a2 = __atomic_load_n(&active, __ATOMIC_SEQ_CST);
        uint64_t b2 = __atomic_load_n(&begun, __ATOMIC_SEQ_CST);
        if (a1 == 0 && a2 == 0 && b1 == b2) return true;
    }
    return false;
}

void SharedEvents::reset() {
    uint64_t *w = reinterpret_cast<uint64_t *>(ev);
    size_t words = kMaxWaitIndex * (sizeof(EventCounters) / sizeof(uint64_t));
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
                                   (static_cast<uint64_t>(k.index) << 17)));
}

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
    const uint32_t ep = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
    const uint32_t ready = (ep << 2) | kReady;
    const uint32_t claiming = (ep << 2) | kClaiming;
    const uint32_t mask = capacity - 1;
    uint64_t h = key_hash(k);
    int probes = capacity < static_cast<uint32_t>(kMaxProbes) ? static_cast<int>(capacity) : kMaxProbes;
    for (int p = 0; p < probes; p++) {
        QueryEntry &e = entries[(h + p) & mask];
        uint32_t st = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
        for (;;) {
            if (st == ready) {
                if (e.queryid == k.queryid && e.datid == k.datid && e.userid == k.userid && e.index == k.index) {
                    __atomic_fetch_add(&e.calls, calls, __ATOMIC_RELAXED);
                    __atomic_fetch_add(&e.total_ns, ns, __ATOMIC_RELAXED);
                    return true;
                }
                break;  // another key: next slot
            }
            if (st == claiming) break;  // being claimed right now: never wait for it
            // Free, or left over from before the last reset: claim it.
            if (__atomic_compare_exchange_n(&e.state, &st, claiming, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                e.queryid = k.queryid;
                e.datid = k.datid;
                e.userid = k.userid;
                e.index = k.index;
                __atomic_store_n(&e.calls, calls, __ATOMIC_RELAXED);
                __atomic_store_n(&e.total_ns, ns, __ATOMIC_RELAXED);
                __atomic_store_n(&e.state, ready, __ATOMIC_RELEASE);
                return true;
            }
            // st now holds what another writer put there; look again.
        }
    }
    __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
    return false;
}

void QueryTable::reset() {
    __atomic_fetch_add(&epoch, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
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
constexpr uint32_t kFormatVersion = 1;

struct SavedRow {
    uint64_t queryid;
    uint32_t datid;
    uint32_t userid;
    uint32_t index;
    uint32_t pad;
    uint64_t calls;
    uint64_t total_ns;
};

bool put(FILE *f, const void *p, size_t n) { return std::fwrite(p, 1, n, f) == n; }
bool get(FILE *f, void *p, size_t n) { return std::fread(p, 1, n, f) == n; }

}  // namespace

bool timing_save(FILE *f, const SharedEvents &ev, const QueryTable &qt, uint16_t index_count) {
    if (index_count > kMaxWaitIndex) return false;
    std::vector<EventCounters> events(index_count);
    ev.snapshot(events.data(), index_count);
    std::vector<SavedRow> rows;
    qt.for_each([&](const QueryRow &r) {
        SavedRow s{};
        s.queryid = r.key.queryid;
        s.datid = r.key.datid;
        s.userid = r.key.userid;
        s.index = r.key.index;
        s.calls = r.calls;
        s.total_ns = r.total_ns;
        rows.push_back(s);
    });
    uint32_t header[5] = {kFormatVersion, index_count, static_cast<uint32_t>(kHistBuckets),
                          static_cast<uint32_t>(sizeof(SavedRow)), static_cast<uint32_t>(rows.size())};
    return put(f, kMagic, sizeof(kMagic)) && put(f, header, sizeof(header)) &&
           put(f, events.data(), events.size() * sizeof(EventCounters)) &&
           put(f, rows.data(), rows.size() * sizeof(SavedRow)) && put(f, kEndMagic, sizeof(kEndMagic));
}

bool timing_load(FILE *f, SharedEvents *ev, QueryTable *qt, uint16_t index_count) {
    char magic[8];
    uint32_t header[5];
    if (!get(f, magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(magic)) != 0) return false;
    if (!get(f, header, sizeof(header))) return false;
    if (header[0] != kFormatVersion || header[1] != index_count || header[2] != kHistBuckets ||
        header[3] != sizeof(SavedRow) || header[4] > (1u << 26))
        return false;
    std::vector<EventCounters> events(index_count);
    std::vector<SavedRow> rows(header[4]);
    if (!get(f, events.data(), events.size() * sizeof(EventCounters))) return false;
    if (!get(f, rows.data(), rows.size() * sizeof(SavedRow))) return false;
    if (!get(f, magic, sizeof(magic)) || std::memcmp(magic, kEndMagic, sizeof(magic)) != 0) return false;
    ev->begin();
    for (uint16_t i = 0; i < index_count; i++) ev->add(i, events[i]);
    ev->end();
    for (const SavedRow &r : rows) {
        if (r.index >= index_count) continue;
        QueryKey k{r.queryid, r.datid, r.userid, static_cast<uint16_t>(r.index)};
        qt->add(k, r.calls, r.total_ns);
    }
    return true;
}

}  // namespace psw
