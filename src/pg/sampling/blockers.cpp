// Who blocks the processes the sampler finds in a heavyweight-lock wait.
//
// Why not pg_blocking_pids(): its GetBlockerStatusData() takes ProcArrayLock
// and all 16 lock-manager partition LWLocks in shared mode for every
// lookup; under pgbench on one hot row (8 clients, 2 cores), 100 such
// lookups a second cut throughput by 40% (a sampler preempted while holding
// ProcArrayLock stalls every commit). The lookup here computes the same
// answer under the one partition LWLock of the awaited lock.
//
// Why rate-limited all the same: backends that take or release a
// heavyweight lock in that partition wait while the sampler walks the
// lock's holders and waiters. So the sampler:
//   - looks up nothing in a tick where no sampled process is in a Lock wait
//     (and nothing at all while sample_period = 0: it does not tick);
//   - looks a process up again at most every kRefreshMs for the same
//     execution and wait; samples in between reuse the last result;
//   - spends at most kLookupsPerSecond lookups per second over all processes
//     (a token bucket holding at most kBurst), new executions first, then the
//     stalest results.
// docs/sampling.md gives the resulting bound on the lock-manager hold.
//
// A lookup's result goes into the blocked backend's slot (blocked_by,
// written only here) when it names other sessions than the slot has for
// the same execution, and, when anything in it differs from the previous
// record for the same execution, into the blocker ring that history samples
// refer to.
#include <time.h>

#include "../activity/proc_reader.h"
#include "sampling.h"

namespace psw {

static constexpr int64 kRefreshMs = 100;
static constexpr double kLookupsPerSecond = 100.0;
static constexpr double kBurst = 4.0;

// The sampler's memory of each PGPROC's last lookup.
struct LookupCache {
    int32 pid;
    uint32 wait;
    TimestampTz query_start;
    int64 looked_ns;        // monotonic; 0: never
    uint64 record_pos;      // blocker ring position of the last record pushed + 1 (0: none)
    LockBlockers last;      // what was last found
};

struct Candidate {
    uint32 sample_index;
    uint32 procno;
    int32 pid;
    uint32 wait;
    TimestampTz query_start;
    bool tried;  // looked up in this tick already
};

static LookupCache *cache = nullptr;
static Candidate *candidates = nullptr;
static uint32 ncandidates = 0;
static BlockerRecord *pending = nullptr;  // records to push in this tick's write section
static uint32 *pending_procno = nullptr;
static uint32 npending = 0;
static uint32 capacity = 0;
static double tokens = kBurst;
static int64 tokens_ns = 0;

static int64 now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// A test build counts the lookups and times them, waiting for the partition
// LWLock and holding it (the test module reads the sums); a release build
// compiles this away.
struct LookupClock {
#ifdef PSW_TEST_HOOKS
    int64 t0 = now_ns();
    int64 t1 = 0;
    void locked() { t1 = now_ns(); }
    void released() {
        int64 t2 = now_ns();
        sampling->blocker_lookups++;
        sampling->blocker_lookup_ns += t2 - t0;
        sampling->blocker_hold_ns += t2 - t1;
    }
#else
    void locked() {}
    void released() {}
#endif
};

void blockers_init(uint32 n) {
    capacity = n;
    cache = static_cast<LookupCache *>(MemoryContextAllocZero(TopMemoryContext, sizeof(LookupCache) * n));
    candidates = static_cast<Candidate *>(MemoryContextAllocZero(TopMemoryContext, sizeof(Candidate) * n));
    pending = static_cast<BlockerRecord *>(MemoryContextAllocZero(TopMemoryContext, sizeof(BlockerRecord) * n));
    pending_procno = static_cast<uint32 *>(MemoryContextAllocZero(TopMemoryContext, sizeof(uint32) * n));
}

void note_lock_wait(uint32 sample_index, uint32 procno, int32 pid, TimestampTz query_start, uint32 wait) {
    if (ncandidates >= capacity || procno >= capacity) return;
    candidates[ncandidates++] = {sample_index, procno, pid, wait, query_start, false};
}

// The PGPROC of a live pid, found the sampler's way (plain loads, no lock).
static bool read_pid(int32 pid, ProcSample *out) {
    uint32 nprocs = proc_count();
    for (uint32 procno = 0; procno < nprocs; procno++) {
        if (ProcGlobal->allProcs[procno].pid != pid) continue;
        return read_proc(procno, out) && out->pid == pid;
    }
    return false;
}

// Pids that block PGPROC procno (pid) in its current heavyweight-lock wait,
// as pg_blocking_pids() computes them (holders of a conflicting mode, and
// waiters queued ahead with a conflicting request; members of the blocked
// process's lock group excluded), but holding only the one lock-manager
// partition LWLock that protects the awaited lock, in shared mode, and
// neither ProcArrayLock nor any other partition. False when it is not
// waiting (any more). Allocates nothing and raises no error.
static bool blocking_pids(uint32 procno, int32 pid, int32 *pids, int max, int *n, uint32 *total) {
    PGPROC *proc = &ProcGlobal->allProcs[procno];
    // Read without the lock, then validated under it: LOCK objects live in
    // shared memory for good (a stale pointer reads a recycled entry, never
    // unmapped memory), and a process's waitLock changes only under the
    // partition lock of the lock it names.
    LOCK *lock = *reinterpret_cast<LOCK *volatile *>(&proc->waitLock);
    if (lock == nullptr) return false;
    LWLock *partition = LockHashPartitionLock(LockTagHashCode(&lock->tag));
    LookupClock clock;
    LWLockAcquire(partition, LW_SHARED);
    clock.locked();
    bool waiting = proc->pid == pid && proc->waitLock == lock &&
                   LockHashPartitionLock(LockTagHashCode(&lock->tag)) == partition;
    *n = 0;
    *total = 0;
    if (waiting) {
        LOCKMASK conflicts = GetLocksMethodTable(lock)->conflictTab[proc->waitLockMode];
        PGPROC *leader = proc->lockGroupLeader != nullptr ? proc->lockGroupLeader : proc;
        auto add = [&](int32 p) {
            for (int i = 0; i < *n; i++)
                if (pids[i] == p) return;
            if (*n < max) pids[(*n)++] = p;
            (*total)++;
        };
        compat_for_each_proclock(lock, [&](PROCLOCK *pl) {
            if (pl->tag.myProc == proc || pl->groupLeader == leader) return;
            if ((pl->holdMask & conflicts) != 0) add(pl->tag.myProc->pid);
        });
        compat_for_each_lock_waiter(lock, [&](PGPROC *w) {
            if (w == proc) return false;  // only those ahead of it
            PGPROC *wl = w->lockGroupLeader != nullptr ? w->lockGroupLeader : w;
            if (wl != leader && (LOCKBIT_ON(w->waitLockMode) & conflicts) != 0) add(w->pid);
            return true;
        });
    }
    LWLockRelease(partition);
    clock.released();
    return waiting;
}

// The blockers of candidate c, each with its state, wait, role and queryid
// read right after (lock-free, as the sampler reads every process). False
// when it no longer waits (granted since it was sampled): nothing to say.
static bool lookup(const Candidate &c, TimestampTz now, LockBlockers *out) {
    memset(out, 0, sizeof(*out));
    out->query_start = c.query_start;
    out->seen_at = now;
    int32 pids[kMaxLockBlockers];
    int n = 0;
    uint32 total = 0;
    if (!blocking_pids(c.procno, c.pid, pids, kMaxLockBlockers, &n, &total)) return false;
    out->count = total;
    for (int i = 0; i < n; i++) {
        LockBlocker &b = out->blockers[i];
        b.pid = pids[i];  // 0: a prepared transaction
        ProcSample s;
        if (pids[i] != 0 && read_pid(pids[i], &s)) {
            b.state = s.state;
            b.wait_event_info = s.wait_event_info;
            b.usesysid = s.usesysid;
            b.queryid = s.queryid;
            b.gpid = s.gpid;
        }
    }
    return true;
}

void resolve_blockers(TimestampTz now, HistorySample *samples) {
    npending = 0;
    if (ncandidates == 0) return;  // nothing in a Lock wait: no lookup
    uint32 n = ncandidates;
    ncandidates = 0;
    int64 t = now_ns();
#ifdef PSW_TEST_HOOKS
    bool enabled = __atomic_load_n(&sampling->blocker_lookup_off, __ATOMIC_RELAXED) == 0;
#else
    constexpr bool enabled = true;
#endif
    if (tokens_ns != 0) tokens = Min(kBurst, tokens + static_cast<double>(t - tokens_ns) / 1e9 * kLookupsPerSecond);
    tokens_ns = t;

    // Lookups in two passes: first processes with no result for their
    // current execution and wait (2), then results older than kRefreshMs
    // (1), stalest first, while tokens last.
    if (enabled) {
        for (int pass = 2; pass >= 1 && tokens >= 1.0; pass--) {
            for (;;) {
                if (tokens < 1.0) break;
                // The stalest candidate of this pass.
                int best = -1;
                for (uint32 i = 0; i < n; i++) {
                    const Candidate &c = candidates[i];
                    if (c.tried) continue;
                    const LookupCache &k = cache[c.procno];
                    bool same_exec = k.looked_ns != 0 && k.pid == c.pid && k.query_start == c.query_start;
                    int due = !same_exec || k.wait != c.wait ? 2
                              : (t - k.looked_ns < kRefreshMs * 1000000LL ? 0 : 1);
                    if (due != pass) continue;
                    if (best < 0 || k.looked_ns < cache[candidates[best].procno].looked_ns) best = static_cast<int>(i);
                }
                if (best < 0) break;
                Candidate &c = candidates[best];
                c.tried = true;
                LookupCache &k = cache[c.procno];
                tokens -= 1.0;
                LockBlockers found;
                if (!lookup(c, now, &found)) continue;
                bool new_exec = !(k.looked_ns != 0 && k.pid == c.pid && k.query_start == c.query_start);
                // The slot keeps the first view of each set of blockers
                // (blockers_replace() says why); k.last has the slot's set.
                if (new_exec || blockers_replace(k.last, found))
                    shared->slots[c.procno].blocked_by.write([&](LockBlockers &d) { d = found; });
                // A record is needed when the result changed, or when the
                // last one is gone (ring reset or wrapped).
                if (new_exec || k.record_pos == 0 || !same_blockers(k.last, found) ||
                    k.record_pos - 1 < blocker_ring().floor() ||
                    blocker_ring().head() - (k.record_pos - 1) > blocker_ring().capacity()) {
                    BlockerRecord &r = pending[npending];
                    memset(&r, 0, sizeof(r));
                    r.pid = c.pid;
                    r.wait = c.wait;
                    r.b = found;
                    pending_procno[npending] = c.procno;
                    npending++;
                    k.record_pos = 0;  // set when pushed
                }
                k.pid = c.pid;
                k.wait = c.wait;
                k.query_start = c.query_start;
                k.looked_ns = t == 0 ? 1 : t;
                k.last = found;
            }
        }
    }

    // Samples name their blockers when this execution has a result: found
    // now, or reused from an earlier lookup (kept while it is recorded).
    for (uint32 i = 0; i < n; i++) {
        const Candidate &c = candidates[i];
        const LookupCache &k = cache[c.procno];
        bool same_exec = k.looked_ns != 0 && k.pid == c.pid && k.query_start == c.query_start;
        if (same_exec) samples[c.sample_index].flags |= kSampleBlockers;
    }
}

void publish_blocker_records(SampleRing<BlockerRecord> &ring) {
    for (uint32 i = 0; i < npending; i++) {
        cache[pending_procno[i]].record_pos = ring.head() + 1;
        ring.push(pending[i]);
    }
    npending = 0;
}

}  // namespace psw
