// The sampling feature: its shared memory (sampler.cpp: the history
// ring, the profile and the minute buckets, PostgreSQL-free structures from
// src/core placed in one ShmemPart, sized from the postmaster GUCs at start),
// the sampler that fills it (sampler.cpp) and the views that read it
// (sampling_views.cpp).
#pragma once

#include "../shared_state.h"
#include "../../core/fixed_hash.h"
#include "../../core/lock_blockers.h"
#include "../../core/minute_buckets.h"
#include "../../core/sample_ring.h"
#include "../../core/seq_region.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Encoded wait of a sample in aggregates: wait_event_info, or 0 for 'CPU'
// (any process outside a wait event). kWaitIdleNoEvent was an idle process
// outside any wait event, shown with NULL names, until that became 'CPU' too;
// it can still come from a stat file saved before, and reads as 'CPU'.
// Bits 16..23 are unused by PostgreSQL's wait_event_info.
constexpr uint32 kWaitIdleNoEvent = 0x00400000u;

// One row of pg_stat_waits_history.
struct HistorySample {
    TimestampTz sample_time;
    int32 pid;
    int32 leader_pid;
    Oid datid;
    Oid usesysid;
    uint32 wait;  // encoded as above
    int16 backend_type;
    uint8 state;
    uint8 flags;  // kSampleBlockers
    uint64 queryid;
    uint64 top_queryid;
    // Start of the statement the sample belongs to (0: none): with pid, it
    // tells one execution's samples from the next run's.
    TimestampTz query_start;
    // Citus's global pid of the distributed session the process served
    // (activity/citus.h), 0 for none or where Citus is not preloaded.
    int64 gpid;
};

// HistorySample::flags: a Lock wait whose blockers were looked up for this
// execution; the blocker ring's latest record for (pid, query_start) seen at
// or before sample_time names them (gone once the blocker ring wrapped).
constexpr uint8 kSampleBlockers = 1;

// One blocker lookup, in the blocker ring (history samples refer to it by
// pid, query_start and time rather than each carrying ~100 bytes). A record
// is written only when the blockers differ from the process's previous
// record for the same execution, so a long wait costs one record.
struct BlockerRecord {
    int32 pid;     // the blocked process
    uint32 wait;   // its wait_event_info when looked up
    LockBlockers b;  // b.query_start, b.seen_at: the key
};

// Key of pg_stat_waits_profile (zero padding: keys compare bytewise).
struct ProfileKey {
    uint64 queryid;
    Oid datid;
    Oid usesysid;
    uint32 wait;
    int32 backend_type;
};

struct SamplingShared {
    SeqRegion profile_seq;  // sampler ticks and resets write under it
    uint32 pad;
    int64 samples_recorded;  // rows written since reset
    int32 period_ms;  // period of the last tick: samples x period_ms is time
    // Since when the history ring holds every sample (start or reset); older
    // windows are answered from the minute buckets.
    TimestampTz history_complete_since;
    uint64 history_offset;
    uint64 profile_offset;
    uint64 buckets_offset;
    uint64 blockers_offset;
#ifdef PSW_TEST_HOOKS
    // Blocker lookups, in a test build (pg_stat_waits_test reads them for
    // the bench and may switch lookups off there, to compare).
    uint32 blocker_lookup_off;
    int64 blocker_lookups;
    int64 blocker_lookup_ns;  // wall time of the lookups, waiting for the partition LWLock included
    int64 blocker_hold_ns;    // time the partition LWLock was held
    // The sampler's idle memo (idle_memo.cpp), switched off by the test
    // module to compare; processes it skipped in its last tick and since start.
    uint32 idle_memo_off;
    int64 idle_memo_skips_last;
    int64 idle_memo_skips;
#endif
};

extern SamplingShared *sampling;
extern const ShmemPart sampling_part;

SampleRing<HistorySample> history_ring();
SampleRing<BlockerRecord> blocker_ring();
// Capacity of the blocker ring for a history of history_size samples.
uint64 blocker_ring_capacity(uint64 history_size);
FixedHashTable<ProfileKey> profile_table();
// Copies the profile's occupied slots into copy (room for slot_count()
// slots) and returns how many: lock-free, or under shared->lock in shared
// mode when the copy keeps racing the sampler; locked: the caller holds
// shared->lock already (sampling_views.cpp).
size_t copy_profile_slots(FixedHashTable<ProfileKey>::Slot *copy, bool locked);
MinuteBuckets minute_buckets();

// The wait a minute-bucket row counts for in _top and _timeline:
// kWaitOtherQueries stripped, and a kWaitIdleNoEvent saved before it became
// 'CPU' merged into CPU (minute buckets are reloaded as raw memory).
inline uint32 minute_row_wait(uint32 wait) {
    if (wait == kWaitCatchAll) return wait;
    wait &= ~kWaitOtherQueries;
    return wait == kWaitIdleNoEvent ? 0 : wait;
}

// Names of an encoded wait as the views show them (the kWaitOtherQueries
// flag is ignored; the catch-all row is 'Other'/'Other').
void encoded_wait_names(uint32 wait, const char **type, const char **name);

// One bounded eviction step of the tables that would otherwise fill up and
// go blind: the profile (when it nears profile_max) and the exact-timing
// per-query table. Called by the sampler in every tick, inside its write
// section (shared->lock held exclusively, profile_seq odd). Backends never
// evict; they never wait for this.
void evict_tables_step();

// What else counts each tick's samples, from a layer above (the
// pg_wait_sampling drop-in's per-process profile): called by the sampler
// inside its write section (shared->lock held exclusively, profile_seq odd)
// with the tick's samples, so a reader copying under profile_seq sees its
// table consistent with the profile. Set once in the postmaster, before the
// sampler starts; null (the default) costs the tick one test.
using TickCounter = void (*)(const HistorySample *samples, uint32 n);
extern TickCounter tick_counter;

// Sampler ticks take shared->lock exclusively for their writes; a reset
// takes it too. Readers normally copy lock-free (see sampling_views.cpp).
void reset_sampling();

// Blocker lookups of one tick (blockers.cpp). note_lock_wait() is called
// for each sample in a Lock wait while the tick reads processes;
// resolve_blockers() then looks blockers up (rate-limited, outside any lock
// of pg_stat_waits) and sets the samples' kSampleBlockers flags;
// publish_blocker_records() pushes the new records inside the tick's write
// section. Scratch memory is allocated once by blockers_init().
void blockers_init(uint32 capacity);
void note_lock_wait(uint32 sample_index, uint32 procno, int32 pid, TimestampTz query_start, uint32 wait);
void resolve_blockers(TimestampTz now, HistorySample *samples);
void publish_blocker_records(SampleRing<BlockerRecord> &ring);

// Registers the sampler background worker (postmaster, preload time;
// sampler.cpp).
void register_sampler();

// Samples taken before their statement had an id (late_ids.cpp), for the
// sampler's tick: which processes it must read even when they look idle;
// observe() each such process once read (nullptr: gone); note() each
// candidate sample once pushed at ring position pos; apply() inside the
// write section gives the ids found this tick to their samples.
void late_ids_init(uint32 capacity);
extern int32 *late_ids_pid;  // per procno: the pid whose samples are noted, 0 for none
inline bool late_ids_watching(uint32 procno) { return late_ids_pid[procno] != 0; }
bool late_ids_candidate(const HistorySample &h);
struct ProcSample;
void late_ids_observe(uint32 procno, const ProcSample *s, TimestampTz now);
void late_ids_note(uint32 procno, const HistorySample &h, uint64 pos, int64 minute);
void late_ids_apply(SampleRing<HistorySample> &ring, FixedHashTable<ProfileKey> &profile, MinuteBuckets buckets);

// Processes a tick may skip as idle (idle_memo.cpp): idle_scan() returns
// the first PGPROC number from `from` on that the tick must read in full
// (nprocs when none), having skipped the empty PGPROCs and the idle
// processes before it and prefetched what the tick reads of the ones
// after. Nothing is skipped with sample_idle on, nor a process the late-id
// watch follows (asked before the memo); use_memo: idle_memo_enabled().
// Scratch memory is allocated once by idle_skip_init().
void idle_skip_init(uint32 capacity);
uint32 idle_scan(uint32 from, uint32 nprocs, bool sample_idle, bool use_memo);
#ifdef PSW_TEST_HOOKS
inline bool idle_memo_enabled() { return __atomic_load_n(&sampling->idle_memo_off, __ATOMIC_RELAXED) == 0; }
void idle_memo_tick_end();  // publishes the tick's counts for the test module
#else
inline bool idle_memo_enabled() { return true; }
inline void idle_memo_tick_end() {}
#endif

// The period, in ms, samples stand for: the sampler's last period (the GUC
// may be 0 now, idling the sampler, while the samples were taken at 10 ms).
// For the SQL readers (sampling_views.cpp, sampling_rollups.cpp).
double sample_period_for_time();

}  // namespace psw
#pragma GCC visibility pop
