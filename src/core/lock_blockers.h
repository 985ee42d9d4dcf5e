// Who blocks a backend that waits for a heavyweight lock, as the sampler saw
// it (PostgreSQL-free). The sampler looks the blockers up for processes it
// samples in a `Lock` wait and publishes them in the blocked backend's slot
// (BackendSlot::blocked_by, written only by the sampler), from where
// slow-execution records copy them; history samples refer to the sampler's
// blocker ring instead.
#pragma once

#include <cstdint>

namespace psw {

struct LockBlocker {
    int32_t pid;
    uint8_t state;             // the blocker's StatementState at that moment
    uint32_t wait_event_info;  // the blocker's wait at that moment (0: none, i.e. CPU)
    uint32_t usesysid;         // the blocker's role (Oid), so readers hide its queryid as pg_stat_activity would
    uint64_t queryid;          // the blocker's current statement (0: none or unknown)
    int64_t gpid;              // Citus's global pid of the session it serves (0: none)
};

constexpr int kMaxLockBlockers = 4;

struct LockBlockers {
    int64_t query_start;  // the blocked statement's query_start (from its slot) when seen
    int64_t seen_at;      // when the sampler looked (PostgreSQL TimestampTz)
    uint32_t count;       // blockers found; more than kMaxLockBlockers keeps the first ones
    LockBlocker blockers[kMaxLockBlockers];
};

// How many entries of b.blockers are filled: min(count, kMaxLockBlockers).
inline uint32_t blockers_kept(const LockBlockers &b) {
    return b.count < static_cast<uint32_t>(kMaxLockBlockers) ? b.count : static_cast<uint32_t>(kMaxLockBlockers);
}

// Whether a and b name the same blockers, in the same order, for the same
// blocked statement, whatever each blocker was doing.
inline bool same_blocker_pids(const LockBlockers &a, const LockBlockers &b) {
    if (a.count != b.count || a.query_start != b.query_start) return false;
    for (uint32_t i = 0; i < blockers_kept(a); i++)
        if (a.blockers[i].pid != b.blockers[i].pid) return false;
    return true;
}

// Whether a and b say the same in every field: the same blockers, each in
// the same state, wait, role and statement.
inline bool same_blockers(const LockBlockers &a, const LockBlockers &b) {
    if (!same_blocker_pids(a, b)) return false;
    for (uint32_t i = 0; i < blockers_kept(a); i++) {
        const LockBlocker &x = a.blockers[i], &y = b.blockers[i];
        if (x.state != y.state || x.wait_event_info != y.wait_event_info || x.queryid != y.queryid ||
            x.usesysid != y.usesysid)
            return false;
    }
    return true;
}

// What a blocked statement's slot keeps of successive lookups: the first
// view of each set of blockers. A later lookup that finds the same sessions
// only changes what they were doing, and the last look before the lock is
// granted is biased: it tends to catch the blocker in the COMMIT or
// ROLLBACK that releases the lock, instead of the state it spent the wait
// in (idle in transaction after the statement that took the lock, say).
inline bool blockers_replace(const LockBlockers &kept, const LockBlockers &found) {
    return !same_blocker_pids(kept, found);
}

}  // namespace psw
