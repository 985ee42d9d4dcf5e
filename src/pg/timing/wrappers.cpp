// The interposed calls: every wrapper instantiated (wrapper.h), the GOT
// patched at preload, and the wrappers' benchmark.
#include <fcntl.h>
#include <unistd.h>

#include <string>

// C++ library headers before PostgreSQL's (port.h redefines *printf).
#include "../../core/got_patch.h"

#include "wrapper.h"

namespace psw {

uint32 interposed_mask_at_preload = 0;

template <typename W>
static GotPatch patch_of(BlockingCall c) {
    return GotPatch{blocking_call_name(c), reinterpret_cast<void *>(&W::call),
                    reinterpret_cast<void **>(&W::real), false};
}

// ---- preload ----------------------------------------------------------------

void timing_install() {
    static bool installed = false;  // never twice
    if (installed || IsUnderPostmaster) return;
    installed = true;
    GotPatch patches[] = {
        patch_of<W_epoll_wait>(kCallEpollWait),
        patch_of<W_sem_wait>(kCallSemWait),
        patch_of<W_pread>(kCallPread),
        patch_of<W_pwrite>(kCallPwrite),
        patch_of<W_pwritev>(kCallPwritev),
        patch_of<W_preadv>(kCallPreadv),
        patch_of<W_fsync>(kCallFsync),
        patch_of<W_fdatasync>(kCallFdatasync),
        patch_of<W_sync_file_range>(kCallSyncFileRange),
        patch_of<W_posix_fallocate>(kCallPosixFallocate),
        patch_of<W_ftruncate>(kCallFtruncate),
        patch_of<W_select>(kCallSelect),
        patch_of<W_recv>(kCallRecv),
        patch_of<W_send>(kCallSend),
        patch_of<W_poll>(kCallPoll),
        patch_of<W_nanosleep>(kCallNanosleep),
        patch_of<W_io_uring_submit>(kCallIoUringSubmit),
        patch_of<W_io_uring_submit_and_wait>(kCallIoUringSubmitAndWait),
        patch_of<W_io_uring_wait_cqes>(kCallIoUringWaitCqes),
        patch_of<W_io_uring_wait_cqe_timeout>(kCallIoUringWaitCqeTimeout),
        patch_of<W_io_uring_get_events>(kCallIoUringGetEvents),
        patch_of<W_io_uring_enter>(kCallIoUringEnter),
    };
    static_assert(sizeof(patches) / sizeof(patches[0]) == kBlockingCallCount, "one patch per interposed call");
    static_assert(kBlockingCallCount <= 32, "interposed_mask has one bit per call");
    std::string *error = new std::string();  // preload-time only; no ereport below while it lives
    int n = 0;
    try {
        n = got_patch_main_program(patches, kBlockingCallCount, error);
    } catch (...) {
        n = 0;
    }
    uint32 mask = 0;
    for (int c = 0; c < kBlockingCallCount; c++)
        if (patches[c].patched) mask |= 1u << c;
    interposed_mask_at_preload = mask;
    // The timed path's clock: RDTSC where the CPU and the kernel vouch for
    // the TSC (invariant, the kernel's clocksource), else clock_gettime.
    tsc_calibrate(&tsc_clock, 20);
    char msg[256];
    strlcpy(msg, error->c_str(), sizeof(msg));
    delete error;
    if (n == 0)
        ereport(LOG, (errmsg("pg_stat_waits: no blocking call could be interposed; exact timing covers "
                             "queries only"),
                      errdetail("%s", msg)));
}

// ---- benchmark ------------------------------------------------------------------

// A no-op stand-in for the real call, so the wrapper's own cost can be
// measured without a syscall's noise. Its own Wrapper instantiation (other
// signature) keeps the benchmark from touching the fsync wrapper's original.
__attribute__((noinline)) static int bench_noop(long x) {
    __asm__ volatile("" ::: "memory");
    return static_cast<int>(x);
}
using W_bench = Wrapper<kCallFsync, int(long)>;

double timing_bench_wrapper_ns(int mode, int64 n) {
    W_bench::real = &bench_noop;
    if (W_fsync::real == nullptr) W_fsync::real = &::fsync;  // not interposed: time libc alone
    bool saved = guc_timing;
    guc_timing = mode == 2;
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
        int (*volatile fn)(long) = &W_bench::call;
        for (int64 i = 0; i < n; i++) (void)fn(-1);
    } else {
        for (int64 i = 0; i < n; i++) (void)W_fsync::call(-1);
    }
    int64 t1 = cpu_ns();
    guc_timing = saved;
    return n > 0 ? static_cast<double>(t1 - t0) / static_cast<double>(n) : 0.0;
}

}  // namespace psw
