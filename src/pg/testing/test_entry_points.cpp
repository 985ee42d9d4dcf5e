// The test module's entry points (test/modules/pg_stat_waits_test, which
// finds them with load_external_function and checks privileges and
// arguments): fault injection, the blocker lookups' switch and counters,
// the idle memo's switch and counters, a process's PGPROC number, a
// backend's blocked_by record, and the wrappers' benchmark.
//
// Compiled only into a test build (make PSW_TEST_HOOKS=1, as ./run test and
// ./run bench build): the release library exports none of them, and the
// sampler's fault check and the lookup counters they read are compiled out
// with them (tools/check_exports.pl checks the release library's exports).
#include <time.h>
#include <unistd.h>

#ifndef PSW_TEST_HOOKS
#error "src/pg/testing/ belongs to test builds only (make PSW_TEST_HOOKS=1)"
#endif

#include "../activity/proc_reader.h"
#include "../sampling/sampling.h"
#include "../shared_state.h"
#include "../timing/timing.h"
#include "../timing/wrapper.h"

// ---- fault injection --------------------------------------------------------

// Asks the sampler to fail with an ERROR at its next tick, to prove that a
// failing sampler exits alone and is restarted (no crash-restart of the
// cluster). Returns the pid of the sampler asked to fail, 0 when none runs.
PSW_EXPORT int32 pg_stat_waits_test_request_sampler_fault(void) {
    psw::require_preloaded();
    int32 pid = psw::shared->sampler_pid;
    __atomic_store_n(&psw::shared->sampler_fault_requested, 1u, __ATOMIC_RELEASE);
    return pid;
}

// ---- blocker lookups ----------------------------------------------------------

// Switches the sampler's blocker lookups off (on = 0) or on, for the bench's
// side-by-side comparison; returns the previous setting.
PSW_EXPORT int32 pg_stat_waits_test_blocker_lookup(int32 on) {
    psw::require_preloaded();
    uint32 old = __atomic_exchange_n(&psw::sampling->blocker_lookup_off, on ? 0u : 1u, __ATOMIC_ACQ_REL);
    return old == 0 ? 1 : 0;
}

// How many lookups the sampler made, their wall time and the time it held
// the partition LWLock.
PSW_EXPORT void pg_stat_waits_test_blocker_stats(int64 *lookups, int64 *ns, int64 *hold_ns) {
    psw::require_preloaded();
    *lookups = __atomic_load_n(&psw::sampling->blocker_lookups, __ATOMIC_RELAXED);
    *ns = __atomic_load_n(&psw::sampling->blocker_lookup_ns, __ATOMIC_RELAXED);
    *hold_ns = __atomic_load_n(&psw::sampling->blocker_hold_ns, __ATOMIC_RELAXED);
}

// ---- the sampler's idle memo ------------------------------------------------------

// Switches the sampler's idle memo off (on = 0) or on, so that one run can
// compare with and without it; returns the previous setting.
PSW_EXPORT int32 pg_stat_waits_test_idle_memo(int32 on) {
    psw::require_preloaded();
    uint32 old = __atomic_exchange_n(&psw::sampling->idle_memo_off, on ? 0u : 1u, __ATOMIC_ACQ_REL);
    return old == 0 ? 1 : 0;
}

// Processes the memo let the sampler skip in its last tick, and since start.
PSW_EXPORT void pg_stat_waits_test_idle_memo_stats(int64 *last_tick, int64 *total) {
    psw::require_preloaded();
    *last_tick = __atomic_load_n(&psw::sampling->idle_memo_skips_last, __ATOMIC_RELAXED);
    *total = __atomic_load_n(&psw::sampling->idle_memo_skips, __ATOMIC_RELAXED);
}

// The PGPROC number of live process pid, -1 when none: tests find out
// whether a new backend took the PGPROC a gone one left.
PSW_EXPORT int32 pg_stat_waits_test_procno_of(int32 pid) {
    psw::require_preloaded();
    uint32 nprocs = psw::proc_count();
    for (uint32 procno = 0; procno < nprocs; procno++)
        if (pid != 0 && ProcGlobal->allProcs[procno].pid == pid) return static_cast<int32>(procno);
    return -1;
}

// The blocked_by record in the slot of pid (the blocked statement's
// query_start, when the sampler first saw these blockers, and up to max
// blocker pids). Returns the number of blockers found (may exceed max), or
// -1 when no live process has that pid or its record cannot be read.
PSW_EXPORT int32 pg_stat_waits_test_blocked_by(int32 pid, int64 *query_start, int64 *seen_at, int32 *pids, int32 max) {
    psw::require_preloaded();
    uint32 nprocs = psw::proc_count();
    for (uint32 procno = 0; procno < nprocs; procno++) {
        if (ProcGlobal->allProcs[procno].pid != pid) continue;
        psw::LockBlockers b;
        if (!psw::shared->slots[procno].blocked_by.read(&b)) return -1;
        *query_start = b.query_start;
        *seen_at = b.seen_at;
        for (int32 i = 0; i < max && i < static_cast<int32>(psw::blockers_kept(b)); i++) pids[i] = b.blockers[i].pid;
        return static_cast<int32>(b.count);
    }
    return -1;
}

// ---- the wrappers' benchmark ----------------------------------------------------

namespace psw {

// A no-op stand-in for the real call, so the wrapper's own cost can be
// measured without a syscall's noise. Its own Wrapper instantiation (other
// signature) keeps the benchmark from touching the fsync wrapper's original.
__attribute__((noinline)) static int bench_noop(long x) {
    __asm__ volatile("" ::: "memory");
    return static_cast<int>(x);
}
using W_bench = Wrapper<kCallFsync, int(long)>;

// CPU ns per call. Modes: 0/1/2 fsync(-1) directly, through the wrapper with
// timing off, with timing on; 3 the two clock readings a timed call adds;
// 4/5/6 a no-op called directly, through a wrapper with timing off, with
// timing on.
static double bench_wrapper_ns(int mode, int64 n) {
    W_bench::real = &bench_noop;
    if (W_fsync::real == nullptr) W_fsync::real = &::fsync;  // not interposed: time libc alone
    bool saved = guc_timing;
    guc_timing = mode == 2;
    timing_switches_changed(guc_timing);
    // CPU time of this process: time lost to other processes on a busy
    // machine does not count.
    auto cpu_ns = [] {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<int64>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    };
    int64 t0 = cpu_ns();
    if (mode == 0) {
        for (int64 i = 0; i < n; i++) (void)W_fsync::real(-1);
    } else if (mode == 3) {  // the two clock readings a timed call adds
        int64 sink = 0;
        for (int64 i = 0; i < n; i++) sink += now_ns() - now_ns();
        if (sink == 42) elog(DEBUG5, "unlikely");
    } else if (mode == 4) {  // no-op called directly (through a pointer, as the GOT would)
        int (*volatile fn)(long) = W_bench::real;
        for (int64 i = 0; i < n; i++) (void)fn(-1);
    } else if (mode == 5 || mode == 6) {  // no-op through the wrapper, timing off / on
        guc_timing = mode == 6;
        timing_switches_changed(guc_timing);
        int (*volatile fn)(long) = &W_bench::call;
        for (int64 i = 0; i < n; i++) (void)fn(-1);
    } else {
        for (int64 i = 0; i < n; i++) (void)W_fsync::call(-1);
    }
    int64 t1 = cpu_ns();
    guc_timing = saved;
    timing_switches_changed(guc_timing);
    return n > 0 ? static_cast<double>(t1 - t0) / static_cast<double>(n) : 0.0;
}

}  // namespace psw

// ns per call of the wrapper benchmark in the given mode (bench_wrapper_ns's
// mode number; the test module maps the names to it).
PSW_EXPORT double pg_stat_waits_test_bench_wrapper_ns(int mode, int64 n) {
    psw::require_preloaded();
    if (psw::timing_shared == nullptr) elog(ERROR, "pg_stat_waits: timing shared memory is missing");
    return psw::bench_wrapper_ns(mode, n);
}
