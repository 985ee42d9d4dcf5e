// Exact timing's shared memory: the per-event totals and the per-query
// table, their eviction step, reset and persistence.
#include "../gucs.h"
#include "local.h"

namespace psw {

TimingShared *timing_shared = nullptr;

static uint32 query_capacity() { return QueryTable::round_capacity(static_cast<uint32>(guc_profile_max) * 2); }

static Size timing_size() { return add_size(kQueryTableOffset, QueryTable::bytes(query_capacity())); }

static void timing_init(void *ptr, bool found) {
    timing_shared = static_cast<TimingShared *>(ptr);
    if (shared != nullptr) shared->interposed_mask = interposed_mask_at_preload;
    if (found) return;
    timing_shared->events.init();
    timing_query_table()->init(query_capacity());
}

const ShmemPart timing_part = {"pg_stat_waits timing", timing_size, timing_init};

void timing_evict_step(uint64 max_visits) {
    if (timing_shared == nullptr) return;
    // Half the per-query table: its lock-free writers probe at most a
    // few dozen slots, which stays cheap and rarely fails at that load.
    QueryTable *qt = timing_query_table();
    qt->evict_step(qt->capacity / 2, max_visits);
}

void timing_reset() {
    if (timing_shared == nullptr) return;
    timing_shared->events.reset();
    timing_query_table()->reset();
}

bool timing_save(FILE *f) {
    if (timing_shared == nullptr) return false;
    try {
        return psw::timing_save(f, timing_shared->events, *timing_query_table(), wait_index_count());
    } catch (...) {
        return false;
    }
}

bool timing_load(FILE *f) {
    if (timing_shared == nullptr) return false;
    try {
        return psw::timing_load(f, &timing_shared->events, timing_query_table(), wait_index_count());
    } catch (...) {
        return false;
    }
}

}  // namespace psw
