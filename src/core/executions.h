// Slow executions, PostgreSQL-free: what one top-level statement waited on
// (StatementWaits, backend-local), the record of one slow run (ExecRecord)
// and the shared ring that keeps the last ones (ExecRing). The PostgreSQL
// side is src/pg/timing/executions.cpp; docs/executions.md says what a user
// sees.
//
// Why these shapes:
//  - StatementWaits is a sparse set (Briggs & Torczon): clearing it at every
//    statement start is one store, so statements under the capture threshold
//    pay nothing for it, and adding a wait is O(1) with no search.
//  - ExecRing is written by many backends at once and read by SQL functions.
//    A writer takes a ticket (one atomic add) and owns entry ticket % capacity
//    while the entry's sequence says "ticket t being written" (odd); readers
//    accept an entry only when its sequence says "ticket t complete" for the
//    ticket they expect there, and copy it again if it moved. Nobody ever
//    waits: a writer that finds its entry still being written by an older,
//    lapped writer drops its record and counts it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lock_blockers.h"
#include "wait_catalog.h"

namespace psw {

// ---- one statement's waits (backend-local) ----------------------------------

struct StatementWait {
    uint16_t index;  // dense wait index (wait_catalog.h)
    uint64_t calls;
    uint64_t ns;
};

class StatementWaits {
public:
    // Forgets every wait: one store.
    void clear() { n_ = 0; }

    // `calls` waits of index idx, ns in all.
    void add(uint16_t idx, uint64_t calls, uint64_t ns) {
        if (idx >= kWaitIndexLimit) return;
        uint16_t p = pos_[idx];
        if (p >= n_ || items_[p].index != idx) {
            p = n_++;
            pos_[idx] = p;
            items_[p] = StatementWait{idx, 0, 0};
        }
        items_[p].calls += calls;
        items_[p].ns += ns;
    }

    uint16_t size() const { return n_; }
    const StatementWait &at(uint16_t i) const { return items_[i]; }

private:
    uint16_t n_ = 0;
    // pos_[idx] is trusted only if it points below n_ at an item of idx, so
    // neither array needs clearing.
    uint16_t pos_[kWaitIndexLimit];
    StatementWait items_[kWaitIndexLimit];
};

// ---- the record of one slow run ---------------------------------------------

// The heaviest waits kept one by one; the others are summed into one row.
constexpr int kExecWaits = 8;
// Room for the statement's text: PostgreSQL's track_activity_query_size
// decides how much of it is kept, up to this.
constexpr uint32_t kExecTextMax = 1024;

struct ExecRecord {
    int64_t started;   // the statement's query_start (PostgreSQL TimestampTz)
    int64_t ended;     // TimestampTz
    int32_t pid;
    uint32_t datid;
    uint32_t userid;
    uint16_t nwaits;       // entries used in waits[]
    uint16_t rest_events;  // events summed into rest_*
    uint64_t queryid;
    int64_t gpid;  // Citus's global pid of the distributed session it ran for (0: none)
    uint64_t elapsed_ns;
    uint64_t wait_ns;  // all its waits (waits[] plus rest)
    StatementWait waits[kExecWaits];  // heaviest first
    uint64_t rest_calls;
    uint64_t rest_ns;
    LockBlockers blockers;  // count 0: none seen
    uint32_t text_len;
    char text[kExecTextMax];  // not NUL-terminated; text_len bytes
};
static_assert(std::is_trivially_copyable<ExecRecord>::value, "shared memory holds trivially copyable data");

// Fills r's waits from w: the kExecWaits heaviest (by time, then calls)
// first, the rest summed; and r->wait_ns.
void exec_summarize_waits(const StatementWaits &w, ExecRecord *r);

// What in a record loaded from the statistics file a statement could not
// have produced, or nullptr: counts and times out of bigint's range, more
// waits or text than the record holds, a wait index at or above index_count,
// a run that ends before it starts or after `now` (TimestampTz).
const char *exec_record_problem(const ExecRecord &r, uint16_t index_count, int64_t now);

// ---- the shared ring ----------------------------------------------------------

struct ExecEntry {
    uint64_t seq;  // 0: never written; 2t+1: ticket t being written; 2t+2: ticket t complete
    ExecRecord rec;
};

struct ExecRing {
    uint32_t capacity;
    uint32_t pad;
    uint64_t next;     // tickets handed out
    uint64_t floor;    // tickets below this were reset away
    uint64_t dropped;  // records dropped (their entry was still being written)
    ExecEntry entries[1];  // capacity entries follow

    static size_t bytes(uint32_t capacity) {
        return offsetof(ExecRing, entries) + static_cast<size_t>(capacity) * sizeof(ExecEntry);
    }
    void init(uint32_t cap);

    // Writer (any process): stores r as the newest record. False (and
    // dropped++) when its entry was busy; never waits.
    bool publish(const ExecRecord &r);

    // Forgets every record published so far (readers stop showing them).
    void reset();

    uint64_t dropped_count() const { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

    // Reader: calls f(const ExecRecord &) for each complete record, oldest
    // first, on a consistent copy in *scratch. Records rewritten while being
    // copied are skipped after a few tries.
    template <typename F>
    void for_each(ExecRecord *scratch, F &&f) const {
        uint64_t end = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
        uint64_t begin = __atomic_load_n(&floor, __ATOMIC_ACQUIRE);
        if (end > capacity && end - capacity > begin) begin = end - capacity;
        for (uint64_t t = begin; t < end; t++)
            if (read(t, scratch)) f(*scratch);
    }

    // Copies the record of ticket t into *out if it is complete and stays so
    // while copied.
    bool read(uint64_t t, ExecRecord *out) const;
};

}  // namespace psw
