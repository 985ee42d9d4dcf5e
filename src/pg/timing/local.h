// Exact timing's backend-local side, shared by its files and by nobody else:
// what a process accumulates between flushes, the statement it times, and
// the inline tests the wrappers make on every call (wrapper.h).
//
// Each process has its own copy of everything here (after fork); the
// timed path writes it with plain stores: no lock, no allocation, no
// syscall. It reaches the shared tables at the flush points (local_flush.cpp):
// the wait for the client, once a second, the statement's end for its
// attributed waits, and exit.
#pragma once

#include <sys/epoll.h>

#include <string>  // before PostgreSQL's port.h (wait_catalog.h uses it)

// C++ library headers before PostgreSQL's (port.h redefines *printf).
#include "../../core/held_waits.h"
#include "../../core/tsc_clock.h"

#include "explain_timing.h"
#include "timing.h"
#include "../activity/proc_reader.h"
#include "../../core/wait_catalog.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Set at preload (wrappers.cpp), published in shared memory (timing_shmem.cpp).
extern uint32 interposed_mask_at_preload;

// ---- the clock -------------------------------------------------------------------
// Calibrated once in the postmaster (timing_install), inherited by every
// child: one time base for all processes. Falls back to clock_gettime.
extern TscClock tsc_clock;
static inline int64 now_ns() { return tsc_clock_ns(tsc_clock); }

static constexpr int64 kFlushIntervalNs = 1000000000;  // at least once a second
// An idle backend publishes what it holds once its client has kept it waiting this long.
static constexpr int kIdleFlushMs = 10;

// ---- what a process accumulates (local_flush.cpp) ------------------------------------
extern LocalTiming local_timing;
extern int64 last_flush_ns;
extern bool exit_hook_registered;
extern BackendSlot *live_slot;
// Whom the q_* part of local_timing belongs to.
extern uint64 pending_queryid;
extern Oid pending_userid;

// Exact tables keep backend types apart (PostgreSQL 18's io workers' reads
// are not a client's); types past the tables' range count as type 0.
static inline uint8_t timing_backend_type() {
    int t = static_cast<int>(MyBackendType);
    return t > 0 && t < kMaxBackendTypes ? static_cast<uint8_t>(t) : 0;
}

// ---- per-query CPU rows, held locally ---------------------------------------------
// A finished statement's ledger rows (CPU time and calls per id) are
// summed here and reach the shared per-query table at the flush points the
// waits already use (idle, once a second, exit) instead of one shared table
// update per statement end. Keyed like their QueryTable entry less the
// database: a process stays with the database it connected to (PostgreSQL
// cannot switch), so every held row is MyDatabaseId's and the search at each
// statement end compares two fields.
struct PendingCpuRow {
    uint64 queryid;
    Oid userid;
    uint64 calls;
    uint64 ns;
};
static constexpr int kPendingCpuRows = 8;
extern PendingCpuRow pending_cpu[kPendingCpuRows];
extern int pending_cpu_count;
extern int64 last_cpu_flush_ns;

void flush_cpu_rows(int64 now);
// The reader's request last seen by flush_cpu_rows().
extern uint32 seen_flush_request;
static inline bool rows_requested() {
    return timing_shared != nullptr &&
           __atomic_load_n(&timing_shared->flush_request, __ATOMIC_RELAXED) != seen_flush_request;
}
// The row the last statement end added to: a held row, or pending_cpu[0]
// with queryid 0 (no row held; a held row's id is never 0) so that it
// matches nothing.
extern PendingCpuRow *last_cpu_row;
void hold_other_cpu_row(uint64 queryid, Oid userid, uint64 calls, uint64 ns);

// A client repeats its statements: the common case is the row the last
// statement end added to, one comparison of the key and no search (the
// rest is out of line, so this path saves no register).
static inline void hold_cpu_row(uint64 queryid, Oid userid, uint64 calls, uint64 ns) {
    PendingCpuRow *r = last_cpu_row;
    if (__builtin_expect(r->queryid == queryid && r->userid == userid, 1)) {
        r->calls += calls;
        r->ns += ns;
        return;
    }
    hold_other_cpu_row(queryid, userid, calls, ns);
}

static inline bool anything_pending() { return local_timing.pending() || pending_cpu_count != 0; }

// Whether local_timing holds waits attributed to a query id: only while
// pending_queryid is set (every attributed add is under it; with it 0 the
// pending waits are the event totals alone). Those must reach the shared
// tables before the id changes or the statement ends; waits outside any
// statement (the wait for the client) can wait for the next flush point
// with everything else.
static inline bool attributed_pending() { return pending_queryid != 0 && local_timing.pending(); }

void flush_waits(int64 now);
// Everything pending: CPU rows and waits.
void flush(int64 now);

void register_exit_hook();

static inline BackendSlot *my_live_slot() {
    if (live_slot == nullptr) live_slot = own_slot();
    return live_slot;
}

static inline bool any_flag() {
    typedef uint32_t __attribute__((may_alias)) FlagWord;
    static_assert(sizeof(timing_flags) == sizeof(FlagWord), "four one-byte flags");
    // Loaded as one value in place (a local copy would have its address
    // taken and cost the caller a stack-protector canary).
    return *reinterpret_cast<const FlagWord *>(&timing_flags) != 0;
}

// ---- the statement being timed (statement_timing.cpp) --------------------------------
// The statement being timed (top level, client and background backends):
// its elapsed time cut into segments per attributed query id, and its calls.
extern StatementLedger ledger;
extern Oid stmt_userid;
// The open statement's waits per event, for its slow run (flush_waits()
// hands them over).
extern StatementWaits stmt_waits;
// Ends the open statement (a no-op if none is open).
void timing_statement_end();
// When the last wait for the client's next message ended, if no statement
// has begun or ended since and timing stayed on (0 otherwise). The
// statement that message carries starts there: the wait's own clock reading
// is its start, so the statement needs no reading of its own (reading and
// parsing the message are part of it).
extern int64 message_arrived_ns;
// Waits of a client's message before its statement began (held_waits.h):
// true when this wait (info, dense index idx, from t0 to t1) was held.
bool hold_wait(uint32 info, uint16_t idx, int64 t0, int64 t1);
void release_held_waits();

// ---- the wrappers' cold paths (local_flush.cpp) -------------------------------------------
// About to wait for the client with a flag up.
void at_client_read();
// The dense index a call of `call` under wait event `info` is counted at.
uint16_t call_index(BlockingCall call, uint32 info);
// The index ClientRead is counted at (0, the CPU row's, until the first
// wait for a client looks it up).
extern uint16_t client_read_index;
// Output to the client with a statement open, outside any wait event.
void sent_with_statement_open();

}  // namespace psw
#pragma GCC visibility pop
