// The interposed calls: every wrapper instantiated (wrapper.h) and the GOT
// patched at preload. The wrappers' benchmark is test code
// (src/pg/testing/).
#include <fcntl.h>
#include <unistd.h>

#include <string>

// C++ library headers before PostgreSQL's (port.h redefines *printf).
#include "../../core/got_patch.h"

#include "wrapper.h"
#include "../activity/citus.h"

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
    // Where Citus is preloaded its waits for other servers, under ClientRead,
    // are told from the wait for the client (wrapper.h, labelled_read()).
    if (citus_preloaded && (mask & (1u << kCallEpollWait)) != 0) {
        remote_reads_labelled = true;
        wrappers_on = true;
    }
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

}  // namespace psw
