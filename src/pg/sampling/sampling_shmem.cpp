#include "sampling.h"
#include "../wait_names.h"

#include "../gucs.h"
#include "../timing/timing.h"

namespace psw {

SamplingShared *sampling = nullptr;

static Size header_size() { return MAXALIGN(sizeof(SamplingShared)); }
static Size history_size() { return MAXALIGN(SampleRing<HistorySample>::bytes(static_cast<uint64>(guc_history_size))); }
static Size profile_size() { return MAXALIGN(FixedHashTable<ProfileKey>::bytes(static_cast<uint64>(guc_profile_max))); }
static Size buckets_size() { return MAXALIGN(MinuteBuckets::bytes(MinuteBuckets::kDefaultBuckets)); }

static Size sampling_size() {
    return add_size(add_size(header_size(), history_size()), add_size(profile_size(), buckets_size()));
}

static void sampling_init(void *ptr, bool found) {
    sampling = static_cast<SamplingShared *>(ptr);
    if (found) return;
    memset(ptr, 0, header_size());
    sampling->history_offset = header_size();
    sampling->profile_offset = sampling->history_offset + history_size();
    sampling->buckets_offset = sampling->profile_offset + profile_size();
    sampling->history_complete_since = GetCurrentTimestamp();
    history_ring().init(static_cast<uint64>(guc_history_size));
    profile_table().init(static_cast<uint64>(guc_profile_max));
    minute_buckets().init(MinuteBuckets::kDefaultBuckets);
}

const ShmemPart sampling_part = {"pg_stat_waits sampling", sampling_size, sampling_init};

SampleRing<HistorySample> history_ring() {
    return SampleRing<HistorySample>(reinterpret_cast<char *>(sampling) + sampling->history_offset);
}
FixedHashTable<ProfileKey> profile_table() {
    return FixedHashTable<ProfileKey>(reinterpret_cast<char *>(sampling) + sampling->profile_offset);
}
MinuteBuckets minute_buckets() {
    return MinuteBuckets(reinterpret_cast<char *>(sampling) + sampling->buckets_offset);
}

void encoded_wait_names(uint32 wait, const char **type, const char **name) {
    if (wait == kWaitCatchAll) {
        *type = "Other";
        *name = "Other";
        return;
    }
    wait &= ~kWaitOtherQueries;
    if (wait == 0 || wait == kWaitIdleNoEvent) {
        *type = "CPU";
        *name = "CPU";
    } else {
        wait_info_names(wait, type, name);
    }
}

// Slots one tick's step may visit per table: a few microseconds, whatever
// the table's size (the clock hand resumes where it stopped).
static constexpr uint64 kEvictVisitsPerTick = 1024;

void evict_tables_step() {
    FixedHashTable<ProfileKey> profile = profile_table();
    // Keep a tenth of profile_max free for the keys new in the next ticks.
    uint64 limit = profile.limit();
    uint64 target = limit - Max(limit / 10, static_cast<uint64>(1));
    if (profile.used() > target) {
        profile.evict(target, kEvictVisitsPerTick, [](const ProfileKey &, uint64) {});
        shared->profile_entries = static_cast<int64>(profile.used());
    }
    if (timing_shared != nullptr) {
        // Half the per-query table: its lock-free writers probe at most a
        // few dozen slots, which stays cheap and rarely fails at that load.
        QueryTable *qt = timing_query_table();
        qt->evict_step(qt->capacity / 2, kEvictVisitsPerTick);
    }
}

void reset_sampling() {
    if (sampling == nullptr) return;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    sampling->profile_seq.write_begin();
    profile_table().clear();
    history_ring().reset();
    minute_buckets().clear();
    sampling->samples_recorded = 0;
    sampling->history_complete_since = GetCurrentTimestamp();
    shared->samples_taken = 0;
    shared->profile_dropped = 0;
    shared->profile_entries = 0;
    shared->history_used = 0;
    shared->sampler_lag_ms_max = 0;
    sampling->profile_seq.write_end();
    LWLockRelease(shared->lock);
}

}  // namespace psw
