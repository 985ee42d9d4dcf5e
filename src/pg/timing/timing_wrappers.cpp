// The blocking-call wrappers of exact timing and the backend-local side:
// accumulate, flush, time statements.
//
// Hot path with timing off: one load of psw::guc_timing, one predictable
// branch, a tail call through the saved original. With timing on: read
// *my_wait_event_info, two clock readings around the real call (RDTSC where
// the TSC is invariant, else clock_gettime through the vDSO: see
// src/core/tsc_clock.h), plain adds into this process's LocalTiming. No lock,
// no allocation, no syscall; errno is preserved.
#include <poll.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <cerrno>
#include <string>

// C++ library headers before PostgreSQL's (port.h redefines *printf).
#include "../../core/got_patch.h"
#include "../../core/tsc_clock.h"
#include "../../core/held_waits.h"

#include "../gucs.h"
#include "../activity/proc_reader.h"
#include "../activity/query_hooks.h"
#include "timing.h"
#include "../../core/wait_catalog.h"

namespace psw {

TimingShared *timing_shared = nullptr;
static uint32 interposed_mask_at_preload = 0;

// ---- backend-local state (each process has its own copy after fork) -----

static LocalTiming local_timing;
static int64 last_flush_ns = 0;
static bool exit_hook_registered = false;
static BackendSlot *live_slot = nullptr;
// The statement being timed (top level, client and background backends):
// its elapsed time cut into segments per attributed query id, and its calls.
TimingFlags timing_flags = {false, false, false, false};
static StatementLedger ledger;
// The statement started before the current one, open or already closed: its
// portal may be dropped while the current one runs (at the current one's
// Bind, extended protocol inside a transaction block). 0: none.
static uint64 prev_statement_id = 0;
static Oid stmt_userid = InvalidOid;
// Slow executions: when the statement started, and its waits per event
// (cleared with one store at its start, read only if it turns out slow).
// The waits reach stmt_waits when local_timing hands them over (every
// flush while the statement is open, the last one at its end), so a timed
// call pays nothing for it.
static int64 stmt_start_ns = 0;
// When the last wait for the client's next message ended, if no statement
// has begun or ended since and timing stayed on (0 otherwise). The
// statement that message carries starts there: the wait's own clock reading
// is its start, so the statement needs no reading of its own (reading and
// parsing the message are part of it).
static int64 message_arrived_ns = 0;
static StatementWaits stmt_waits;
// The open statement is being ended by the next one's start.
static bool ending_late = false;
// Whom the q_* part of local_timing belongs to.
static uint64 pending_queryid = 0;
static Oid pending_userid = InvalidOid;
// Waits of a client's message before its statement began (held_waits.h):
// parse analysis locking its tables, a Bind locking its cached plan's.
static HeldWaits held_waits;
// PostgreSQL's statement start when the first of them began, and the start
// of the last statement that took held waits (its slow run reports it).
static TimestampTz held_query_start = 0;
static int64 adopted_start_ns = -1;
static TimestampTz adopted_query_start = 0;

static constexpr int64 kFlushIntervalNs = 1000000000;  // at least once a second

// Calibrated once in the postmaster (timing_install), inherited by every
// child: one time base for all processes. Falls back to clock_gettime.
static TscClock tsc_clock = {false, 0, 0, 0};

static inline int64 now_ns() { return tsc_clock_ns(tsc_clock); }

int64 timing_now_ns() { return now_ns(); }
const char *timing_clock_name() { return tsc_clock.usable ? "tsc" : "clock_gettime"; }

// Exact tables keep backend types apart (PostgreSQL 18's io workers' reads
// are not a client's); types past the tables' range count as type 0.
static inline uint8_t timing_backend_type() {
    int t = static_cast<int>(MyBackendType);
    return t > 0 && t < kMaxBackendTypes ? static_cast<uint8_t>(t) : 0;
}

// ---- per-query CPU rows, held locally ----------------------------------------
// A finished statement's ledger rows (CPU time and calls per id) are
// summed here and reach the shared per-query table at the flush points the
// waits already use (idle, once a second, exit) instead of one shared table
// update per statement end. Keyed like their QueryTable entry less the
// database: a process stays with the database it connected to (PostgreSQL
// cannot switch), so every held row is MyDatabaseId's and the search at each
// statement end compares two fields.
struct PendingCpuRow {
    uint64 queryid;
    Oid userid;
    uint64 calls;
    uint64 ns;
};
static constexpr int kPendingCpuRows = 8;
static PendingCpuRow pending_cpu[kPendingCpuRows];
static int pending_cpu_count = 0;
static int64 last_cpu_flush_ns = 0;

static void flush_cpu_rows(int64 now) {
    last_cpu_flush_ns = now;
    if (timing_shared != nullptr) {
        QueryTable *qt = timing_query_table();
        const uint8_t btype = timing_backend_type();
        const uint16_t cpu = wait_index(0);
        for (int i = 0; i < pending_cpu_count; i++) {
            const PendingCpuRow &r = pending_cpu[i];
            qt->add(QueryKey{r.queryid, MyDatabaseId, r.userid, cpu, btype}, r.calls, r.ns);
        }
    }
    pending_cpu_count = 0;
}

__attribute__((noinline)) static void hold_new_cpu_row(uint64 queryid, Oid userid, uint64 calls, uint64 ns) {
    if (pending_cpu_count == kPendingCpuRows) flush_cpu_rows(now_ns());
    pending_cpu[pending_cpu_count++] = PendingCpuRow{queryid, userid, calls, ns};
}

// The search calls nothing, so the common case (a row already held) saves
// no register.
static inline void hold_cpu_row(uint64 queryid, Oid userid, uint64 calls, uint64 ns) {
    for (int i = 0; i < pending_cpu_count; i++) {
        PendingCpuRow &r = pending_cpu[i];
        if (r.queryid == queryid && r.userid == userid) {
            r.calls += calls;
            r.ns += ns;
            return;
        }
    }
    hold_new_cpu_row(queryid, userid, calls, ns);
}

static inline bool anything_pending() { return local_timing.pending() || pending_cpu_count != 0; }

// Whether local_timing holds waits attributed to a query id: only while
// pending_queryid is set (every attributed add is under it; with it 0 the
// pending waits are the event totals alone). Those must reach the shared
// tables before the id changes or the statement ends; waits outside any
// statement (the wait for the client) can wait for the next flush point
// with everything else.
static inline bool attributed_pending() { return pending_queryid != 0 && local_timing.pending(); }

// Waits only: a statement's end publishes its waits under their ids; its
// CPU rows wait for the next full flush.
static void flush_waits(int64 now);

static void flush(int64 now) {
    if (pending_cpu_count != 0) flush_cpu_rows(now);
    flush_waits(now);
}

static void flush_waits(int64 now) {
    last_flush_ns = now;
    if (!local_timing.pending()) return;
    TimingShared *ts = timing_shared;
    if (ts == nullptr) {
        local_timing.drain([](uint16_t, const EventCounters &, uint64_t, uint64_t) {});
        return;
    }
    QueryTable *qt = timing_query_table();
    const uint64 qid = pending_queryid;
    const Oid dbid = MyDatabaseId;
    const Oid userid = pending_userid;
    const uint8_t btype = timing_backend_type();
    ts->events.begin();
    // While a statement is open every attributed wait is one of its own
    // (nested ids included: a change of id flushes first).
    const bool to_statement = timing_flags.open;
    local_timing.drain([&](uint16_t idx, const EventCounters &c, uint64_t qcalls, uint64_t qns) {
        ts->events.add(btype, idx, c);
        if (qcalls != 0 && qid != 0) {
            qt->add(QueryKey{qid, dbid, userid, idx, btype}, qcalls, qns);
            if (to_statement) stmt_waits.add(idx, qcalls, qns);
        }
    });
    ts->events.end();
}

static void release_held_waits();

// on_shmem_exit runs before ProcKill (registered earlier, run later), while
// MyProc and shared memory are still there: nothing accumulated is lost.
static void flush_at_exit(int, Datum) {
    timing_statement_end();
    if (timing_flags.held) release_held_waits();
    flush(now_ns());
    if (timing_flags.log_pending) executions_write_log();
}

static void register_exit_hook() {
    exit_hook_registered = true;
    if (!proc_exit_inprogress) on_shmem_exit(flush_at_exit, 0);
}

static inline BackendSlot *my_live_slot() {
    if (live_slot == nullptr && shared != nullptr && MyProc != nullptr) {
        int procno = compat_my_procno();
        if (procno >= 0 && static_cast<uint32>(procno) < shared->num_slots) live_slot = &shared->slots[procno];
    }
    return live_slot;
}

// About to wait for the client with a flag up (one load tests them all).
__attribute__((noinline)) static void at_client_read() {
    // A statement open: the statement hooks decide whether it is over
    // (query_hooks_client_read()).
    if (timing_flags.open) query_hooks_client_read();
    // The statement is over and the main loop holds no resource, so the
    // last slow run's LOG line can be written (before its wait is timed).
    if (timing_flags.log_pending) executions_write_log();
    // Waits held for a statement that never began (an error, an untimed
    // statement): the message is done with, they were outside any.
    if (timing_flags.held) release_held_waits();
}

static inline bool any_flag() {
    typedef uint32_t __attribute__((may_alias)) FlagWord;
    static_assert(sizeof(timing_flags) == sizeof(FlagWord), "four one-byte flags");
    // Loaded as one value in place (a local copy would have its address
    // taken and cost the caller a stack-protector canary).
    return *reinterpret_cast<const FlagWord *>(&timing_flags) != 0;
}

// Before the real call: publish the wait's start; flush what is pending
// when a second has passed or the process is about to sleep idle (so an
// idle backend's counters are never held back). The epoll_wait for a
// client's next message (when the call is that one: idle_flush_later)
// publishes the per-query rows at once, and leaves the waits outside any
// statement (the event total of the wait for the client) to
// wait_for_client, which flushes them only if the client keeps it waiting.
__attribute__((always_inline)) static inline int64 begin_call(uint32 info, bool idle_flush_later) {
    if (__builtin_expect(any_flag(), 0) && info == WAIT_EVENT_CLIENT_READ) at_client_read();
    int64 t0 = now_ns();
    if (anything_pending()) {
        const bool due = t0 - last_flush_ns >= kFlushIntervalNs;
        // The wait for the client publishes the finished statements' CPU
        // rows (a session reads them right after its statement); the rest
        // waits for wait_for_client(), which publishes it once the client
        // has kept the backend waiting kIdleFlushMs.
        if (idle_flush_later && !due && !attributed_pending()) {
            if (pending_cpu_count != 0) flush_cpu_rows(t0);
        } else if (info == WAIT_EVENT_CLIENT_READ || (info & 0xFF000000U) == PG_WAIT_ACTIVITY || due) {
            flush(t0);
        }
    }
    // The live wait start is shown only next to the wait event the process
    // reports (live_wait_ms()): a call under none publishes nothing, and
    // end_call() has nothing to clear.
    if (info != 0) {
        BackendSlot *s = my_live_slot();
        if (s != nullptr) {
            *reinterpret_cast<volatile uint32 *>(&s->wait_start_info) = info;
            __atomic_store_n(&s->wait_start_ns, t0, __ATOMIC_RELEASE);
        }
    }
    return t0;
}

static inline void end_call_tail(int64 t1) {
    if (t1 - last_flush_ns >= kFlushIntervalNs) flush(t1);
}

// The wait for a client's next message (epoll_wait under ClientRead). A
// backend publishes what it has pending before it sleeps idle, but a busy
// client's next statement usually comes within a fraction of a millisecond,
// and publishing the waits outside any statement (the event total of this
// wait: a few shared atomic adds and a 32-bucket histogram) would then cost
// more than the statement's own timing. begin_call() has published the per-query rows;
// this call first waits at most kIdleFlushMs, and only if no message came
// by then flushes the rest and waits on for the remainder of the caller's
// timeout. So those event totals reach other sessions once the backend has
// been idle kIdleFlushMs, or within a second while it is busy; a session
// reading the views sees its own at once (timing_flush_own()). The caller
// sees one epoll_wait: a result, an EINTR or a timeout no earlier than it
// asked for (the two parts' timeouts add up to its own).
static constexpr int kIdleFlushMs = 10;

static int wait_for_client(int (*real)(int, struct epoll_event *, int, int), int epfd, struct epoll_event *events,
                           int maxevents, int timeout) {
    if (!anything_pending() || (timeout >= 0 && timeout <= kIdleFlushMs))
        return real(epfd, events, maxevents, timeout);
    int n = real(epfd, events, maxevents, kIdleFlushMs);
    if (n != 0) return n;
    flush(now_ns());
    return real(epfd, events, maxevents, timeout < 0 ? -1 : timeout - kIdleFlushMs);
}

// ---- waits before a statement begins ------------------------------------------
// A client's message can wait before the hook that begins its statement
// runs: parse analysis takes its tables' locks before post_parse_analyze,
// and a Bind takes a cached plan's locks before the Execute whose first
// hook begins it. A statement queued behind another session's lock (a
// migration's ACCESS EXCLUSIVE) waits exactly there. Such a wait, outside
// any statement while a client's message runs a text, is held; when a
// statement of the same text begins before the backend waits for the
// client again, the held waits become its own and it starts at the first
// of them (timing_statement_start). Otherwise they are counted outside any
// statement, as a wait between statements always was.

// From here on, waits added to local_timing are queryid's (run by userid).
static void attribute_pending_to(uint64 queryid, Oid userid) {
    if (pending_queryid == queryid) return;
    if (attributed_pending()) flush(now_ns());
    pending_queryid = queryid;
    pending_userid = userid;
}

static void release_held_waits() {
    timing_flags.held = false;
    attribute_pending_to(0, InvalidOid);
    held_waits.drain([](uint16_t idx, uint64_t ns) { local_timing.add(idx, ns, false); });
}

__attribute__((noinline)) static bool hold_wait(uint32 info, uint16_t idx, int64 t0, int64 t1) {
    // A client backend (or single-user mode) inside a message with a text;
    // waits for the client itself are never a statement's.
    if (debug_query_string == nullptr || (MyBackendType != B_BACKEND && IsUnderPostmaster) ||
        (info & 0xFF000000U) == PG_WAIT_CLIENT || timing_shared == nullptr)
        return false;
    uint64 key = held_text_key(debug_query_string);
    if (timing_flags.held && held_waits.key() != key) release_held_waits();  // another text's
    if (held_waits.empty()) held_query_start = MyBEEntry != nullptr ? MyBEEntry->st_activity_start_timestamp : 0;
    if (!held_waits.hold(key, idx, t0, static_cast<uint64_t>(t1 - t0))) return false;
    timing_flags.held = true;
    return true;
}

// The statement just begun (queryid, at the ledger's start) takes the held
// waits if they were its text's.
static void adopt_held_waits(uint64 queryid) {
    if (debug_query_string == nullptr || held_text_key(debug_query_string) != held_waits.key())
        return release_held_waits();
    timing_flags.held = false;
    ledger.start(queryid, held_waits.start_ns());
    stmt_start_ns = held_waits.start_ns();
    adopted_start_ns = stmt_start_ns;
    adopted_query_start = held_query_start;
    attribute_pending_to(queryid, stmt_userid);
    held_waits.drain([](uint16_t idx, uint64_t ns) {
        local_timing.add(idx, ns, true);
        ledger.add_wait(ns);
    });
}

// The dense index a call of `call` under wait event `info` is counted at.
__attribute__((noinline)) static uint16_t call_index(BlockingCall call, uint32 info) {
    return info == 0 ? unreported_index(call) : wait_index(info);
}

// Inlined into each wrapper: a call and a second register save per timed
// call would cost more than the code it duplicates.
__attribute__((always_inline)) static inline void end_call(uint32 info, uint16_t idx, int64 t0, bool client_wait) {
    int64 t1 = now_ns();
    if (info != 0 && live_slot != nullptr) __atomic_store_n(&live_slot->wait_start_ns, 0, __ATOMIC_RELEASE);
    if (__builtin_expect(!exit_hook_registered, 0)) register_exit_hook();
    // Waits inside a timed statement are attributed to the id its time
    // is charged to (nested under track = all); parallel workers run
    // their leader's statement.
    uint64 qid = 0;
    if (timing_flags.open) {
        qid = ledger.current();
        ledger.add_wait(static_cast<uint64_t>(t1 - t0));
    } else if (client_wait)
        message_arrived_ns = t1;  // where the statement it carries starts
    else if (IsParallelWorker())
        qid = current_queryid();
    else if (hold_wait(info, idx, t0, t1))
        return end_call_tail(t1);
    if (qid != pending_queryid) {
        if (attributed_pending()) flush(t1);
        pending_queryid = qid;
        pending_userid = timing_flags.open ? stmt_userid : (qid != 0 ? GetUserId() : InvalidOid);
    }
    local_timing.add(idx, static_cast<uint64_t>(t1 - t0), qid != 0);
    end_call_tail(t1);
}

// Live wait time of a process for pg_stat_waits_activity.wait_time: how long
// the blocking call it is inside has lasted, from the start begin_call()
// published (end_call() clears it). The start counts only while the process
// still reports the wait event the call began under, so a stale or torn pair
// never shows. Reader side: any process.
double live_wait_ms(const ProcSample &s, bool *valid) {
    *valid = false;
    if (s.wait_start_ns == 0 || s.wait_event_info == 0 || s.wait_start_info != s.wait_event_info) return 0.0;
    int64 now = timing_now_ns();  // the wrappers' clock
    if (now < s.wait_start_ns) return 0.0;
    *valid = true;
    return static_cast<double>(now - s.wait_start_ns) / 1e6;
}

// Output to the client with a statement open, outside any wait event.
__attribute__((noinline, cold)) static void sent_with_statement_open() {
    if (MyProc != nullptr && my_wait_event_info != nullptr &&
        *static_cast<volatile uint32 *>(my_wait_event_info) == 0)
        query_hooks_client_send();
}

// One wrapper per interposed call, generated from its signature.
template <BlockingCall C, typename Sig>
struct Wrapper;

template <BlockingCall C, typename R, typename... A>
struct Wrapper<C, R(A...)> {
    static R (*real)(A...);
    // The last wait event this call was timed under and its index:
    // (info | 1 << 32) << 16 | index, 0 before the first. A call site
    // usually waits under the same event again, so the index is one
    // comparison instead of a catalog lookup.
    static uint64 index_cache;

    static inline uint16_t index_of(uint32 info) {
        const uint64 key = static_cast<uint64>(info) | (static_cast<uint64>(1) << 32);
        if (__builtin_expect((index_cache >> 16) == key, 1)) return static_cast<uint16_t>(index_cache);
        uint16_t idx = call_index(C, info);
        index_cache = (key << 16) | idx;
        return idx;
    }

    static R call(A... a) {
        // A call that cannot block (the client socket's recv and send: it
        // is non-blocking, its waits are the epoll_wait around it) is not
        // clocked; send only tells an open statement that its results went
        // out (query_hooks_client_send()).
        if constexpr (call_never_blocks(C)) {
            if (C == kCallSend && __builtin_expect(timing_flags.open, 0) && guc_timing) sent_with_statement_open();
            return real(a...);
        } else {
            if (__builtin_expect(!guc_timing, 1)) return real(a...);
            return timed(a...);
        }
    }

    __attribute__((noinline)) static R timed(A... a) {
        if (MyProc == nullptr || my_wait_event_info == nullptr) return real(a...);  // postmaster, logger
        uint32 info = *static_cast<volatile uint32 *>(my_wait_event_info);
        const bool client_wait = C == kCallEpollWait && info == WAIT_EVENT_CLIENT_READ;
        int64 t0 = begin_call(info, client_wait);
        R r;
        if constexpr (C == kCallEpollWait)
            r = client_wait ? wait_for_client(real, a...) : real(a...);
        else
            r = real(a...);
        // errno is the real call's: nothing after it (the clock, plain
        // adds, a flush's atomic adds) calls into libc or sets it.
        end_call(info, index_of(info), t0, client_wait);
        return r;
    }
};

template <BlockingCall C, typename R, typename... A>
R (*Wrapper<C, R(A...)>::real)(A...) = nullptr;
template <BlockingCall C, typename R, typename... A>
uint64 Wrapper<C, R(A...)>::index_cache = 0;

using W_epoll_wait = Wrapper<kCallEpollWait, int(int, struct epoll_event *, int, int)>;
using W_sem_wait = Wrapper<kCallSemWait, int(sem_t *)>;
using W_pread = Wrapper<kCallPread, ssize_t(int, void *, size_t, off_t)>;
using W_pwrite = Wrapper<kCallPwrite, ssize_t(int, const void *, size_t, off_t)>;
using W_pwritev = Wrapper<kCallPwritev, ssize_t(int, const struct iovec *, int, off_t)>;
using W_preadv = Wrapper<kCallPreadv, ssize_t(int, const struct iovec *, int, off_t)>;
using W_fsync = Wrapper<kCallFsync, int(int)>;
using W_fdatasync = Wrapper<kCallFdatasync, int(int)>;
using W_sync_file_range = Wrapper<kCallSyncFileRange, int(int, off64_t, off64_t, unsigned int)>;
using W_posix_fallocate = Wrapper<kCallPosixFallocate, int(int, off_t, off_t)>;
using W_ftruncate = Wrapper<kCallFtruncate, int(int, off_t)>;
using W_select = Wrapper<kCallSelect, int(int, fd_set *, fd_set *, fd_set *, struct timeval *)>;
using W_recv = Wrapper<kCallRecv, ssize_t(int, void *, size_t, int)>;
using W_send = Wrapper<kCallSend, ssize_t(int, const void *, size_t, int)>;
using W_poll = Wrapper<kCallPoll, int(struct pollfd *, nfds_t, int)>;
using W_nanosleep = Wrapper<kCallNanosleep, int(const struct timespec *, struct timespec *)>;
// liburing (PostgreSQL 18, io_method = io_uring): the backend's submission
// and its wait for completions happen inside these library calls, imported
// by postgres through its PLT like the libc calls above. liburing's structs
// are only passed through, so opaque pointers keep its headers out.
using W_io_uring_submit = Wrapper<kCallIoUringSubmit, int(void *)>;
using W_io_uring_submit_and_wait = Wrapper<kCallIoUringSubmitAndWait, int(void *, unsigned)>;
using W_io_uring_wait_cqes = Wrapper<kCallIoUringWaitCqes, int(void *, void **, unsigned, void *, sigset_t *)>;
using W_io_uring_wait_cqe_timeout = Wrapper<kCallIoUringWaitCqeTimeout, int(void *, void **, void *)>;
using W_io_uring_get_events = Wrapper<kCallIoUringGetEvents, int(void *)>;
using W_io_uring_enter = Wrapper<kCallIoUringEnter, int(unsigned, unsigned, unsigned, unsigned, sigset_t *)>;

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

// ---- shared memory ------------------------------------------------------------

static uint32 query_capacity() { return QueryTable::round_capacity(static_cast<uint32>(guc_profile_max) * 2); }
static Size query_table_offset() { return MAXALIGN(sizeof(TimingShared)); }

QueryTable *timing_query_table() {
    return reinterpret_cast<QueryTable *>(reinterpret_cast<char *>(timing_shared) + query_table_offset());
}

static Size timing_size() { return add_size(query_table_offset(), QueryTable::bytes(query_capacity())); }

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

// ---- statements -----------------------------------------------------------------

// A ledger row (CPU time and calls of one id) goes to its (queryid, CPU)
// entry, which the view shows as it is.
static void spill_row(const LedgerRow &r) { hold_cpu_row(r.queryid, stmt_userid, r.calls, r.cpu_ns); }

// Whether this process times its statements: one with a PGPROC, not a
// parallel worker (its leader times the statement), shared memory there.
// All three are settled before a process runs its first statement and stay
// so while it runs statements, so a yes is kept (a no is asked again: it
// may come from a call before the process was set up).
static bool process_times_statements = false;

__attribute__((noinline)) static bool decide_process_times_statements() {
    process_times_statements = MyProc != nullptr && !IsParallelWorker() && timing_shared != nullptr;
    if (process_times_statements && !exit_hook_registered) register_exit_hook();
    return process_times_statements;
}

// Whether a statement of queryid began (timed) at now.
static inline bool begin_statement(uint64 queryid) {
    const int64 arrived = message_arrived_ns;
    message_arrived_ns = 0;
    // Waits attributed so far belong to whatever came before this statement.
    if (attributed_pending()) flush(now_ns());
    if (!guc_timing || queryid == 0 || !(process_times_statements || decide_process_times_statements()))
        return false;
    stmt_userid = GetUserId();
    int64 t = arrived != 0 ? arrived : now_ns();
    ledger.start(queryid, t);
    stmt_start_ns = t;
    stmt_waits.clear();
    timing_flags.open = true;
    return true;
}

void timing_statement_end_late() {
    ending_late = true;
    timing_statement_end();
    ending_late = false;
}

// A statement start with a flag up: the statement that is still open (its
// end was missed) ends, and may leave a slow run's LOG line, which can be
// written here (a hook runs: timing.h); held waits go to the new statement.
__attribute__((noinline)) static void statement_start_flagged(uint64 queryid) {
    if (timing_flags.open) timing_statement_end_late();
    if (timing_flags.log_pending) executions_write_log();
    bool begun = begin_statement(queryid);
    if (timing_flags.held) {
        if (begun)
            adopt_held_waits(queryid);
        else
            release_held_waits();
    }
}

void timing_statement_start(uint64 queryid) {
    prev_statement_id = ledger.last_statement();
    // Usually no flag is up: one test for all.
    if (__builtin_expect(any_flag(), 0)) return statement_start_flagged(queryid);
    begin_statement(queryid);
}

void timing_attribute(uint64 queryid) { ledger.switch_to(queryid, now_ns(), spill_row); }

void timing_count_call(uint64 queryid) { ledger.count_call(queryid, spill_row); }

bool timing_top_call(uint64 queryid) { return queryid == 0 || ledger.count_top_call(queryid, spill_row); }

uint64 timing_statement_id() { return ledger.statement(); }

// The other cases of timing_dropped_portal_call.
__attribute__((noinline)) static bool dropped_portal_call_other(uint64 queryid) {
    if (queryid == 0) return false;
    if (timing_flags.open) {
        if (queryid == prev_statement_id) ledger.count_call(queryid, spill_row);
        return false;
    }
    // Between statements: the last one ended when the backend waited for
    // its client, and its portal goes at this Bind before the next begins
    // (or the one before it, when the last was only a protocol Parse, as a
    // client preparing its next statement sends).
    if ((queryid == ledger.last_statement() || queryid == prev_statement_id) && guc_timing &&
        timing_shared != nullptr)
        hold_cpu_row(queryid, stmt_userid, 1, 0);
    return false;
}

// The usual case tested first, out of the way of the others' register saves:
// the open statement's own execution.
bool timing_dropped_portal_call(uint64 queryid) {
    if (__builtin_expect(ledger.count_own_call(queryid), 1)) return true;
    return dropped_portal_call_other(queryid);
}

__attribute__((noinline, cold)) static void capture_slow_run(int64 t) {
    executions_capture(stmt_waits, t - stmt_start_ns, ledger.statement(), !ending_late,
                       stmt_start_ns == adopted_start_ns ? adopted_query_start : 0);
}

void timing_statement_end() {
    if (!timing_flags.open) return;
    int64 t = now_ns();
    if (attributed_pending()) flush_waits(t);  // its waits, under their ids (and into stmt_waits)
    timing_flags.open = false;
    pending_queryid = 0;
    message_arrived_ns = 0;  // a pipelined next statement reads the clock
    // Slow executions: the one comparison every statement pays.
    if (__builtin_expect(t - stmt_start_ns >= capture_min_ns, 0)) capture_slow_run(t);
    ledger.close(t, spill_row);
    // A backend that never goes idle (a pipelining client) still publishes
    // its CPU rows once a second; the statement that turned timing off
    // publishes them at once (no wrapper flushes them later).
    if (t - last_cpu_flush_ns >= kFlushIntervalNs || !guc_timing) flush_cpu_rows(t);
}

void timing_flush_own() {
    // Timing turned off (or a reader's statement, which has begun already):
    // a message that arrived before is no start for a later statement.
    message_arrived_ns = 0;
    if (anything_pending()) flush(now_ns());
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
