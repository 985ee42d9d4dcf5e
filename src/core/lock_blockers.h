// Who blocks a backend that waits for a heavyweight lock, as the sampler saw
// it (PostgreSQL-free). The sampler looks the blockers up for processes it
// samples in a `Lock` wait and publishes them in the blocked backend's slot
// (BackendSlot::blocked_by, written only by the sampler); history samples
// and slow-execution records copy them from there.
#pragma once

#include <cstdint>

namespace psw {

struct LockBlocker {
    int32_t pid;
    uint8_t state;             // the blocker's StatementState at that moment
    uint32_t wait_event_info;  // the blocker's wait at that moment (0: none, i.e. CPU)
    uint32_t usesysid;         // the blocker's role (Oid), so readers hide its queryid as pg_stat_activity would
    uint64_t queryid;          // the blocker's current statement (0: none or unknown)
};

constexpr int kMaxLockBlockers = 4;

struct LockBlockers {
    int64_t query_start;  // the blocked statement's query_start (from its slot) when seen
    int64_t seen_at;      // when the sampler looked (PostgreSQL TimestampTz)
    uint32_t count;       // blockers found; more than kMaxLockBlockers keeps the first ones
                          // (readers take min(count, kMaxLockBlockers) entries)
    LockBlocker blockers[kMaxLockBlockers];
};

}  // namespace psw
