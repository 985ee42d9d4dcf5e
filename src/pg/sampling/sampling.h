// The sampling feature: its shared memory (sampler.cpp: the history
// ring, the profile and the minute buckets, PostgreSQL-free structures from
// src/core placed in one ShmemPart, sized from the postmaster GUCs at start),
// the sampler that fills it (sampler.cpp) and the views that read it
// (sampling_views.cpp).
#pragma once

#include "../shared_state.h"
#include "../../core/fixed_hash.h"
#include "../../core/minute_buckets.h"
#include "../../core/sample_ring.h"
#include "../../core/seq_region.h"

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
    uint8 pad;
    uint64 queryid;
    uint64 top_queryid;
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
};

extern SamplingShared *sampling;
extern const ShmemPart sampling_part;

SampleRing<HistorySample> history_ring();
FixedHashTable<ProfileKey> profile_table();
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

// Sampler ticks take shared->lock exclusively for their writes; a reset
// takes it too. Readers normally copy lock-free (see sampling_views.cpp).
void reset_sampling();

// Registers the sampler background worker (postmaster, preload time;
// sampler.cpp).
void register_sampler();

}  // namespace psw
