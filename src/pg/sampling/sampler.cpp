// The sampler: a background worker that every sample_period reads each live
// process's wait event and statement ids (lock-free, via proc_reader) and
// appends them to the history ring, the profile and the minute buckets; and
// the shared memory those live in (first part of this file), with its
// eviction and reset. The views that read it are in sampling_views.cpp.
//
// Why a latch and a monotonic schedule: ticks are planned at start + k ×
// period so a slow tick does not shift all later ones; the lateness of each
// wakeup is the lag reported in pg_stat_waits_status. A tick that is more
// than a period late is skipped (counted in the lag), never run twice.
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../core/tsc_clock.h"
#include "../gucs.h"
#include "../activity/citus.h"
#include "../activity/proc_reader.h"
#include "sampling.h"
#include "../timing/timing.h"
#include "../wait_names.h"

PSW_EXPORT void pg_stat_waits_sampler_main(Datum arg);

namespace psw {

// ---- shared memory: history ring, profile, minute buckets --------------------

SamplingShared *sampling = nullptr;

static Size header_size() { return MAXALIGN(sizeof(SamplingShared)); }
static Size history_size() { return MAXALIGN(SampleRing<HistorySample>::bytes(static_cast<uint64>(guc_history_size))); }
static Size profile_size() { return MAXALIGN(FixedHashTable<ProfileKey>::bytes(static_cast<uint64>(guc_profile_max))); }
static Size buckets_size() { return MAXALIGN(MinuteBuckets::bytes(MinuteBuckets::kDefaultBuckets)); }
static Size blockers_size() {
    return MAXALIGN(SampleRing<BlockerRecord>::bytes(blocker_ring_capacity(static_cast<uint64>(guc_history_size))));
}

// One record per blocker lookup whose result changed, at most one lookup per
// blocked process per 100 ms: an eighth of the history's capacity covers the
// history's time span unless most sampled processes change blockers all the
// time (then the oldest samples lose their blockers first: NULL, not wrong).
uint64 blocker_ring_capacity(uint64 history_size) { return history_size / 8 + 64; }

static Size sampling_size() {
    return add_size(add_size(add_size(header_size(), history_size()), add_size(profile_size(), buckets_size())),
                    blockers_size());
}

static void sampling_init(void *ptr, bool found) {
    sampling = static_cast<SamplingShared *>(ptr);
    if (found) return;
    memset(ptr, 0, header_size());
    sampling->history_offset = header_size();
    sampling->profile_offset = sampling->history_offset + history_size();
    sampling->buckets_offset = sampling->profile_offset + profile_size();
    sampling->blockers_offset = sampling->buckets_offset + buckets_size();
    // The same reading as stats_reset, where the minute buckets' samples
    // start (the core part is initialized first): a clock reading of its
    // own, microseconds later, made use_history() think the ring had lost
    // samples the buckets held, once the first minute closed.
    sampling->history_complete_since = shared->stats_reset;
    history_ring().init(static_cast<uint64>(guc_history_size));
    profile_table().init(static_cast<uint64>(guc_profile_max));
    minute_buckets().init(MinuteBuckets::kDefaultBuckets);
    blocker_ring().init(blocker_ring_capacity(static_cast<uint64>(guc_history_size)));
}

const ShmemPart sampling_part = {"pg_stat_waits sampling", sampling_size, sampling_init};

SampleRing<HistorySample> history_ring() {
    return SampleRing<HistorySample>(reinterpret_cast<char *>(sampling) + sampling->history_offset);
}
FixedHashTable<ProfileKey> profile_table() {
    return FixedHashTable<ProfileKey>(reinterpret_cast<char *>(sampling) + sampling->profile_offset);
}
SampleRing<BlockerRecord> blocker_ring() {
    return SampleRing<BlockerRecord>(reinterpret_cast<char *>(sampling) + sampling->blockers_offset);
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
    } else if (wait == kWaitRemoteRead) {
        remote_read_names(type, name);
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
    timing_evict_step(kEvictVisitsPerTick);
}

void reset_sampling() {
    if (sampling == nullptr) return;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    sampling->profile_seq.write_begin();
    profile_table().clear();
    history_ring().reset();
    blocker_ring().reset();
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

// ---- the worker ----------------------------------------------------------------

void register_sampler() {
    BackgroundWorker worker;
    memset(&worker, 0, sizeof(worker));
    // A database-less "connection" puts the sampler in the proc array, so
    // pg_stat_activity shows it and pg_terminate_backend(sampler_pid) works;
    // PostgreSQL allows that only from ConsistentState on, which is when a
    // hot standby starts accepting connections (so the sampler runs there too).
    // Without a database it never holds up CREATE/ALTER/DROP DATABASE (it
    // absorbs their barriers at CHECK_FOR_INTERRUPTS each tick); on 19 it
    // also asks to be terminated should it ever be connected to one.
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION | PSW_BGWORKER_INTERRUPTIBLE;
    worker.bgw_start_time = BgWorkerStart_ConsistentState;
    worker.bgw_restart_time = 1;  // seconds; a sampler that exits is back within one
    strlcpy(worker.bgw_library_name, "pg_stat_waits", BGW_MAXLEN);
    strlcpy(worker.bgw_function_name, "pg_stat_waits_sampler_main", BGW_MAXLEN);
    strlcpy(worker.bgw_name, "pg_stat_waits sampler", BGW_MAXLEN);
    strlcpy(worker.bgw_type, "pg_stat_waits sampler", BGW_MAXLEN);
    worker.bgw_main_arg = static_cast<Datum>(0);
    RegisterBackgroundWorker(&worker);
}

// Asks the kernel for a short time slice (0.1 ms) under the normal policy.
// Why: on a CPU-saturated server, exactly when a DBA needs the samples,
// the sampler competes with every busy backend, and Linux's EEVDF scheduler
// (6.12 and later) lets a waking task with a shorter slice preempt the
// running one at once, instead of after the other's slice. The sampler
// works about 0.1 ms a tick, so its CPU share is unchanged; only its wakeup
// latency improves. Older kernels ignore the field; any failure (seccomp, an
// old kernel without the syscall) leaves the default and is only logged.
//
// The kernel's struct sched_attr (first version, 48 bytes); glibc 2.36 has
// no wrapper, and <linux/sched/types.h> clashes with <sched.h>.
struct KernelSchedAttr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

static void request_short_slice() {
    KernelSchedAttr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.sched_policy = SCHED_OTHER;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);  // sched_setattr sets nice too: keep ours
    if (errno != 0) return;
    attr.sched_nice = nice;
    attr.sched_runtime = 100 * 1000;  // ns
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0)
        elog(DEBUG1, "pg_stat_waits sampler: could not request a short scheduler slice: %m");
}

// What the sampler reports while it sleeps between ticks: on 17+ an
// Extension event of its own (pg_stat_activity shows "PgStatWaitsSampler"),
// on 15/16 PostgreSQL's generic "Extension".
static uint32 sampler_wait_event = PG_WAIT_EXTENSION;

static uint32 encode_wait(const ProcSample &s) {
    if (s.wait_event_info != 0) return s.remote_read ? kWaitRemoteRead : s.wait_event_info;
    // Outside any wait event the process runs, whatever its state: an idle
    // or idle-in-transaction backend outside ClientRead is sending a result,
    // starting up, or reading and parsing the next command (the slot turns
    // active only after parse analysis). CPU, as for active; the state
    // column of the history still says idle.
    return 0;  // CPU
}

TickCounter tick_counter = nullptr;

// Per-tick scratch, allocated once for the largest possible process count.
static HistorySample *tick_samples = nullptr;
static ProfileKey *tick_profile_keys = nullptr;
static MinuteKey *tick_keys = nullptr;
static uint32 *tick_procnos = nullptr;
static uint32 tick_capacity = 0;

static void take_sample() {
    TimestampTz now = GetCurrentTimestamp();
    uint32 nprocs = proc_count();
    uint32 n = 0;
    bool sample_idle = guc_sample_idle;
    const bool use_memo = !sample_idle && idle_memo_enabled();
    // The processes that can be skipped as idle are passed over inside
    // idle_scan(), without a call per process (idle_memo.cpp).
    for (uint32 procno = idle_scan(0, nprocs, sample_idle, use_memo); procno < nprocs && n < tick_capacity;
         procno = idle_scan(procno + 1, nprocs, sample_idle, use_memo)) {
        // A process whose statement has samples without an id yet is read
        // in full: idle, it may show that statement's id now.
        const bool watching = late_ids_watching(procno);
        ProcSample s;
        if (!read_proc(procno, &s)) {
            if (watching) late_ids_observe(procno, nullptr, now);
            continue;
        }
        if (watching) late_ids_observe(procno, &s, now);
        if (s.pid == MyProcPid) continue;  // the sampler does not sample itself
        if (!sample_idle && is_idle_sample(s)) continue;
        HistorySample &h = tick_samples[n];
        memset(&h, 0, sizeof(h));
        h.sample_time = now;
        h.pid = s.pid;
        h.leader_pid = s.leader_pid;
        h.datid = s.datid;
        h.usesysid = s.usesysid;
        h.wait = encode_wait(s);
        h.backend_type = static_cast<int16>(s.backend_type);
        h.state = s.state;
        h.queryid = s.queryid;
        h.top_queryid = s.top_queryid;
        h.query_start = s.query_start;
        h.gpid = s.gpid;
        if ((h.wait & 0xFF000000U) == PG_WAIT_LOCK) note_lock_wait(n, procno, s.pid, s.query_start, h.wait);
        ProfileKey &p = tick_profile_keys[n];
        memset(&p, 0, sizeof(p));
        p.queryid = h.queryid;
        p.datid = h.datid;
        p.usesysid = h.usesysid;
        p.wait = h.wait;
        p.backend_type = h.backend_type;
        MinuteKey &k = tick_keys[n];
        memset(&k, 0, sizeof(k));
        k.queryid = s.queryid;
        k.wait = h.wait;
        tick_procnos[n] = procno;
        n++;
    }

    // Who blocks the samples in a Lock wait (if any): before the write
    // section, so the lock manager's locks are never held under ours.
    resolve_blockers(now, tick_samples);

    // Writes are short (n samples); readers never hold this lock while
    // copying, only a reset or a reader's rare fallback does.
    SampleRing<HistorySample> ring = history_ring();
    SampleRing<BlockerRecord> blockers = blocker_ring();
    FixedHashTable<ProfileKey> profile = profile_table();
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    sampling->profile_seq.write_begin();
    publish_blocker_records(blockers);
    const uint64 first_pos = ring.head();
    for (uint32 i = 0; i < n; i++) ring.push(tick_samples[i]);
    int64 dropped = 0;
    for_each_run(tick_profile_keys, n, [&](const ProfileKey &key, uint64 count) {
        if (!profile.add(key, count)) dropped += static_cast<int64>(count);
    });
    const int64 minute = now / USECS_PER_MINUTE;
    bool buckets_ok = true;
    try {
        minute_buckets().tick(minute, tick_keys, n);
    } catch (...) {
        buckets_ok = false;  // out of memory while compacting a minute
    }
    late_ids_apply(ring, profile, minute_buckets());
    if (tick_counter != nullptr) tick_counter(tick_samples, n);
    sampling->samples_recorded += n;
    sampling->period_ms = guc_sample_period_ms;
    shared->samples_taken++;
    shared->last_sample_time = now;
    shared->profile_dropped += dropped;
    shared->profile_entries = static_cast<int64>(profile.used());
    evict_tables_step();  // bounded: keeps the profile and per-query table from going blind
    shared->history_used = static_cast<int64>(ring.used());
    sampling->profile_seq.write_end();
    LWLockRelease(shared->lock);
    idle_memo_tick_end();
    if (!buckets_ok) elog(LOG, "pg_stat_waits sampler: out of memory while closing a minute bucket");
    for (uint32 i = 0; i < n; i++)
        if (late_ids_candidate(tick_samples[i])) late_ids_note(tick_procnos[i], tick_samples[i], first_pos + i, minute);
}

static void sampler_exit(int code, Datum arg) {
    if (shared != nullptr && shared->sampler_pid == MyProcPid) shared->sampler_pid = 0;
}

static void record_lag(double lag_ms) {
    shared->sampler_lag_ms_last = lag_ms;
    if (lag_ms > shared->sampler_lag_ms_max) shared->sampler_lag_ms_max = lag_ms;
}

static void sampler_loop() {
    int64 next_ns = 0;  // 0: schedule from now
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        if (ShutdownRequestPending) proc_exit(1);  // 1: the postmaster restarts us unless shutting down
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
            next_ns = 0;  // a new period starts a new schedule
        }
        int64 period_ns = static_cast<int64>(guc_sample_period_ms) * 1000000LL;
        if (period_ns <= 0) {
            // Idle until a reload changes the period.
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1, sampler_wait_event);
            ResetLatch(MyLatch);
            next_ns = 0;
            continue;
        }
        int64 now = monotonic_ns();
        if (next_ns == 0) next_ns = now;
        if (now < next_ns) {
            long timeout_ms = static_cast<long>((next_ns - now + 999999) / 1000000);
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms,
                            sampler_wait_event);
            ResetLatch(MyLatch);
            continue;
        }
        record_lag(static_cast<double>(now - next_ns) / 1e6);
#ifdef PSW_TEST_HOOKS
        if (__atomic_exchange_n(&shared->sampler_fault_requested, 0u, __ATOMIC_ACQ_REL) != 0)
            ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                            errmsg("pg_stat_waits sampler: fault injected by pg_stat_waits_inject_sampler_fault()")));
#endif
        take_sample();
        next_ns += period_ns;
        if (next_ns <= now) next_ns = now + period_ns;  // late by a period or more: skip, never burst
    }
}

}  // namespace psw

void pg_stat_waits_sampler_main(Datum arg) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    BackgroundWorkerInitializeConnection(nullptr, nullptr, 0);

    if (psw::shared == nullptr || psw::sampling == nullptr) {
        elog(LOG, "pg_stat_waits sampler: shared memory is not initialized");
        proc_exit(1);
    }
    (void)psw::attach_backend_status_array();  // 19: each process finds it itself
    psw::tick_capacity = psw::shared->num_slots;
    psw::tick_samples = static_cast<psw::HistorySample *>(
        MemoryContextAllocZero(TopMemoryContext, sizeof(psw::HistorySample) * psw::tick_capacity));
    psw::tick_profile_keys = static_cast<psw::ProfileKey *>(
        MemoryContextAllocZero(TopMemoryContext, sizeof(psw::ProfileKey) * psw::tick_capacity));
    psw::tick_keys = static_cast<psw::MinuteKey *>(
        MemoryContextAllocZero(TopMemoryContext, sizeof(psw::MinuteKey) * psw::tick_capacity));
    psw::tick_procnos = static_cast<uint32 *>(
        MemoryContextAllocZero(TopMemoryContext, sizeof(uint32) * psw::tick_capacity));
    psw::blockers_init(psw::tick_capacity);
    psw::late_ids_init(psw::tick_capacity);
    psw::idle_skip_init(psw::tick_capacity);
    psw::request_short_slice();
    psw::sampler_wait_event = psw::compat_register_wait_event("PgStatWaitsSampler");
    // The sampler's own waits are its schedule, not work: they stay out of
    // the exact-timing tables on every release, whatever timing is set to
    // in the configuration (an override outranks the file on reload).
    SetConfigOption("pg_stat_waits.timing", "off", PGC_SUSET, PGC_S_OVERRIDE);
    before_shmem_exit(psw::sampler_exit, 0);
    psw::shared->sampler_pid = MyProcPid;
    psw::sampler_loop();
}
