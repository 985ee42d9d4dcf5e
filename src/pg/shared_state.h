// Layout of pg_stat_waits' shared memory (boundary; trivially copyable only).
#pragma once

#include "compat.h"
#include "../core/lock_blockers.h"
#include "../core/seqlock.h"
#include "../core/statement_tracker.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// A slot's state is the statement tracker's (the hooks publish it as is).
using SlotState = StatementState;
constexpr uint8_t kStateUnknown = kStmtUnknown;
constexpr uint8_t kStateActive = kStmtActive;
constexpr uint8_t kStateIdle = kStmtIdle;
constexpr uint8_t kStateIdleInXact = kStmtIdleInXact;
const char *slot_state_name(uint8_t state);  // nullptr for kStateUnknown

// Where a slot's statement comes from (SlotData::source).
enum SlotSource : uint8_t {
    // The backend's statement tracker (track = all, timing on, processes
    // other than client backends): state and ids below are the truth.
    kSourceTracker = 0,
    // A client backend in the default mode: PostgreSQL's own backend status
    // entry (st_state, st_query_id, st_activity_start_timestamp) is the
    // truth; state == kStmtActive marks an exception for the statement that
    // started at query_start (the ids below win while PostgreSQL's entry
    // shows that same statement start, running).
    kSourceServer = 1,
};

// What a backend publishes about itself. Written only by that backend.
struct SlotData {
    int32 pid;  // owner; a slot whose pid differs from its PGPROC's is stale
    uint8_t source;  // SlotSource
    uint8_t state;
    uint64 queryid;
    uint64 top_queryid;
    TimestampTz query_start;
};

// One per PGPROC (index = pgprocno), cache-line aligned so that backends
// never share a line with each other.
struct alignas(64) BackendSlot {
    SeqLocked<SlotData> pub;
    // Live wait for pg_stat_waits_activity.wait_time (exact timing): the
    // monotonic start in ns of the blocking call in progress, 0 if none.
    int64 wait_start_ns;
    uint32 wait_start_info;
    // Where Citus is preloaded: 1 when the backend's last wait in ClientRead
    // was for another server, not for its own client (activity/citus.h,
    // kWaitRemoteRead; the wrappers set it as each such wait begins).
    uint8_t remote_read;
    // Exact timing: whether the backend holds finished statements' CPU rows
    // not yet in the shared per-query table, and the last reader request
    // its publishing of such rows answered (timing_collect_held_rows()).
    uint8_t cpu_rows_held;
    uint32 cpu_rows_answered;
    // Heavyweight-lock blockers of this backend's current statement, as the
    // sampler last saw them. Written only by the sampler (its own line, so
    // the backend's stores above never share a cache line with it).
    alignas(64) SeqLocked<LockBlockers> blocked_by;
};

// Global state shared by backends, the sampler and readers.
struct SharedState {
    LWLock *lock;  // taken only by readers and the sampler, never by hooks
    uint32 num_slots;
    uint64 shmem_bytes;
    uint32 interposed_mask;  // bit per psw::BlockingCall patched in the executable
    TimestampTz stats_reset;

    // Sampler bookkeeping (pg_stat_waits_status).
    int32 sampler_pid;
    int64 samples_taken;
    TimestampTz last_sample_time;
    double sampler_lag_ms_max;
    double sampler_lag_ms_last;
    int64 history_used;
    int64 profile_entries;
    int64 profile_dropped;
#ifdef PSW_TEST_HOOKS
    // Set by the test module's fault injection (through
    // pg_stat_waits_test_request_sampler_fault()): the sampler raises an
    // ERROR at its next tick, exits, and the postmaster restarts it.
    uint32 sampler_fault_requested;
#endif

    BackendSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

extern SharedState *shared;
// PostgreSQL's own backend status array (for backend types): found at
// startup on 15-18, by each process on first use on 19; nullptr until then.
extern PgBackendStatus *backend_status_array;
extern int backend_status_slots;
// Sets backend_status_array if it is not yet; false if it cannot be found.
bool attach_backend_status_array();

// This process's slot (by its PGPROC number), or nullptr before shared
// memory or its PGPROC exist. Callers keep it: it never changes after.
inline BackendSlot *own_slot() {
    if (shared == nullptr || MyProc == nullptr) return nullptr;
    int procno = compat_my_procno();
    return procno >= 0 && static_cast<uint32>(procno) < shared->num_slots ? &shared->slots[procno] : nullptr;
}

// Raises the standard "must be preloaded" error if shared memory is missing.
void require_preloaded();

// Shared memory is carved into named parts; each feature lists its own in
// its entry of features.cpp, so sizes are requested and initialized in one
// place.
struct ShmemPart {
    const char *name;
    Size (*size)();
    void (*init)(void *ptr, bool found);
};

}  // namespace psw
#pragma GCC visibility pop
