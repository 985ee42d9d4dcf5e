#include "executions.h"

namespace psw {

static_assert(sizeof(ExecRecord) % sizeof(uint64_t) == 0 && alignof(ExecRecord) >= alignof(uint64_t),
              "records are copied in whole words");

void exec_summarize_waits(const StatementWaits &w, ExecRecord *r) {
    r->nwaits = 0;
    r->rest_events = 0;
    r->rest_calls = 0;
    r->rest_ns = 0;
    r->wait_ns = 0;
    auto heavier = [](const StatementWait &a, const StatementWait &b) {
        return a.ns != b.ns ? a.ns > b.ns : a.calls > b.calls;
    };
    // Insertion into the kExecWaits heaviest; what falls out is rest.
    for (uint16_t i = 0; i < w.size(); i++) {
        StatementWait x = w.at(i);
        r->wait_ns += x.ns;
        if (r->nwaits == kExecWaits && !heavier(x, r->waits[kExecWaits - 1])) {
            r->rest_events++;
            r->rest_calls += x.calls;
            r->rest_ns += x.ns;
            continue;
        }
        if (r->nwaits == kExecWaits) {  // the lightest kept one becomes rest
            const StatementWait &out = r->waits[kExecWaits - 1];
            r->rest_events++;
            r->rest_calls += out.calls;
            r->rest_ns += out.ns;
            r->nwaits--;
        }
        int j = r->nwaits++;
        while (j > 0 && heavier(x, r->waits[j - 1])) {
            r->waits[j] = r->waits[j - 1];
            j--;
        }
        r->waits[j] = x;
    }
}

// Racing copies are discarded by the sequence check; relaxed atomic word
// accesses keep them well-defined.
static void store_words(ExecRecord *dst, const ExecRecord &src) {
    const uint64_t *s = reinterpret_cast<const uint64_t *>(&src);
    uint64_t *d = reinterpret_cast<uint64_t *>(dst);
    for (size_t i = 0; i < sizeof(ExecRecord) / sizeof(uint64_t); i++) __atomic_store_n(d + i, s[i], __ATOMIC_RELAXED);
}

static void load_words(ExecRecord *dst, const ExecRecord &src) {
    const uint64_t *s = reinterpret_cast<const uint64_t *>(&src);
    uint64_t *d = reinterpret_cast<uint64_t *>(dst);
    for (size_t i = 0; i < sizeof(ExecRecord) / sizeof(uint64_t); i++) d[i] = __atomic_load_n(s + i, __ATOMIC_RELAXED);
}

void ExecRing::init(uint32_t cap) {
    capacity = cap;
    pad = 0;
    next = 0;
    floor = 0;
    dropped = 0;
    for (uint32_t i = 0; i < cap; i++) entries[i].seq = 0;
}

bool ExecRing::publish(const ExecRecord &r) {
    uint64_t t = __atomic_fetch_add(&next, 1, __ATOMIC_ACQ_REL);
    ExecEntry &e = entries[t % capacity];
    uint64_t s = __atomic_load_n(&e.seq, __ATOMIC_ACQUIRE);
    // Busy (odd) or already holding a later ticket (a writer lapped us):
    // drop rather than wait or overwrite newer data.
    if ((s & 1) != 0 || s > 2 * t ||
        !__atomic_compare_exchange_n(&e.seq, &s, 2 * t + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
    store_words(&e.rec, r);
    __atomic_store_n(&e.seq, 2 * t + 2, __ATOMIC_RELEASE);
    return true;
}

void ExecRing::reset() { __atomic_store_n(&floor, __atomic_load_n(&next, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE); }

bool ExecRing::read(uint64_t t, ExecRecord *out) const {
    const ExecEntry &e = entries[t % capacity];
    for (int attempt = 0; attempt < 3; attempt++) {
        uint64_t s1 = __atomic_load_n(&e.seq, __ATOMIC_ACQUIRE);
        if (s1 != 2 * t + 2) return false;  // not written yet, being written, or lapped
        load_words(out, e.rec);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e.seq, __ATOMIC_RELAXED) == s1) return true;
    }
    return false;
}

const char *exec_record_problem(const ExecRecord &r, uint16_t index_count, int64_t now) {
    constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
    if (r.nwaits > kExecWaits || r.text_len > kExecTextMax) return "a slow execution has more waits or text than fit";
    if (r.pid <= 0 || r.started > r.ended || r.ended > now) return "a slow execution's process or times are impossible";
    if (r.elapsed_ns > kMax || r.wait_ns > kMax || r.rest_calls > kMax || r.rest_ns > kMax)
        return "a slow execution's counts or times are out of range";
    for (uint16_t i = 0; i < r.nwaits; i++) {
        if (r.waits[i].index >= index_count) return "a slow execution has an unknown wait event";
        if (r.waits[i].calls > kMax || r.waits[i].ns > kMax)
            return "a slow execution's counts or times are out of range";
    }
    return nullptr;
}

}  // namespace psw
