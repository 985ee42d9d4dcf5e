// One wrapper per interposed blocking call, generated from its signature,
// and the timed path every wrapper inlines.
//
// Hot path with timing off: one load of psw::wrappers_on, one predictable
// branch, a tail call through the saved original. With timing on: read
// *my_wait_event_info, two clock readings around the real call (RDTSC where
// the TSC is invariant, else clock_gettime through the vDSO: see
// src/core/tsc_clock.h), plain adds into this process's LocalTiming
// (local.h). No lock, no allocation, no syscall.
//
// Included by wrappers.cpp, which instantiates every wrapper, and by the
// wrappers' benchmark of a test build (src/pg/testing/).
#pragma once

#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "explain_timing.h"
#include "local.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Before the real call: publish the wait's start; flush what is pending
// when a second has passed or the process is about to sleep idle (so an
// idle backend's counters are never held back). (The wait for a client's
// next message has a path of its own: client_read() below.)
// kRemote: a ClientRead that waits for another server (Citus), inside the
// statement: neither the end of a statement nor the client's idle time.
template <bool kRemote = false>
__attribute__((always_inline)) static inline int64 begin_call(uint32 info) {
    const bool client = !kRemote && info == WAIT_EVENT_CLIENT_READ;
    if (__builtin_expect(any_flag(), 0) && client) at_client_read();
    int64 t0 = now_ns();
    if (anything_pending() && (client || (info & 0xFF000000U) == PG_WAIT_ACTIVITY ||
                               t0 - last_flush_ns >= kFlushIntervalNs))
        flush(t0);
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

// The waits after the real call go to qid: a change of id publishes what
// the previous one had first.
__attribute__((always_inline)) static inline void add_attributed(uint16_t idx, uint64 qid, int64 t0, int64 t1) {
    if (qid != pending_queryid) {
        if (attributed_pending()) flush(t1);
        pending_queryid = qid;
        pending_userid = timing_flags.open ? stmt_userid : (qid != 0 ? GetUserId() : InvalidOid);
    }
    local_timing.add(idx, static_cast<uint64_t>(t1 - t0), qid != 0);
    end_call_tail(t1);
}

// Inlined into each wrapper: a call and a second register save per timed
// call would cost more than the code it duplicates.
__attribute__((always_inline)) static inline void end_call_at(uint32 info, uint16_t idx, int64 t0, int64 t1) {
    if (info != 0 && live_slot != nullptr) __atomic_store_n(&live_slot->wait_start_ns, 0, __ATOMIC_RELEASE);
    // Waits inside a timed statement are attributed to the id its time
    // is charged to (nested under track = all); parallel workers run
    // their leader's statement.
    uint64 qid = 0;
    if (timing_flags.open) {
        qid = ledger.current();
        ledger.add_wait(static_cast<uint64_t>(t1 - t0));
    } else if (IsParallelWorker())
        qid = current_queryid();
    else if (hold_wait(info, idx, t0, t1))
        return end_call_tail(t1);
    add_attributed(idx, qid, t0, t1);
}

__attribute__((always_inline)) static inline void end_call(uint32 info, uint16_t idx, int64 t0) {
    end_call_at(info, idx, t0, now_ns());
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
static inline int wait_for_client(int (*real)(int, struct epoll_event *, int, int), int epfd,
                                  struct epoll_event *events, int maxevents, int timeout) {
    if (!anything_pending() || (timeout >= 0 && timeout <= kIdleFlushMs))
        return real(epfd, events, maxevents, timeout);
    int n = real(epfd, events, maxevents, kIdleFlushMs);
    if (n != 0) return n;
    flush(now_ns());
    return real(epfd, events, maxevents, timeout < 0 ? -1 : timeout - kIdleFlushMs);
}

// epoll_wait under ClientRead: the wait for a client's next message, once
// per statement of a client backend, so it has a path of its own (W is its
// wrapper, whose real epoll_wait it calls). Before it sleeps it publishes
// what a second has gathered, or the per-query rows a reader asked for
// since they were last published (the reader waits for this point); the
// rest goes in wait_for_client() once the client keeps the backend waiting
// kIdleFlushMs. Waits attributed to a query id need no test of their own
// here: the end of this wait hands them over before it adds its own
// (add_attributed). Its clock reading at the end is where the statement
// the message carries starts (message_arrived_ns), so the statement reads
// no clock of its own; the wait's own total is published at the next of
// these points (not at its end: a wait long enough to need that has passed
// wait_for_client()'s flush, and the next wait for the client is a
// statement away).
template <typename W>
__attribute__((noinline)) static int client_read(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    if (__builtin_expect(any_flag(), 0)) {
        at_client_read();
        // Only an EXPLAIN's waits were being timed (it is over by now).
        if (!guc_timing) return W::real(epfd, events, maxevents, timeout);
    }
    const int64 t0 = now_ns();
    // (Either flush with nothing pending is a few stores, and rare.)
    if (__builtin_expect(t0 - last_flush_ns >= kFlushIntervalNs, 0))
        flush(t0);
    else if (__builtin_expect(rows_requested(), 0))
        flush_cpu_rows(t0);
    BackendSlot *s = my_live_slot();
    if (s != nullptr) {
        *reinterpret_cast<volatile uint32 *>(&s->wait_start_info) = WAIT_EVENT_CLIENT_READ;
        __atomic_store_n(&s->wait_start_ns, t0, __ATOMIC_RELEASE);
    }
    const int r = wait_for_client(W::real, epfd, events, maxevents, timeout);
    const int64 t1 = now_ns();
    if (s != nullptr) __atomic_store_n(&s->wait_start_ns, 0, __ATOMIC_RELEASE);
    uint16_t idx = client_read_index;
    // The process's first wait for its client: its index, and the exit
    // hook that publishes what it holds (a process has a first wait for
    // its client once, and the hook stays registered).
    if (__builtin_expect(idx == 0, 0)) {
        idx = client_read_index = call_index(kCallEpollWait, WAIT_EVENT_CLIENT_READ);
        if (!exit_hook_registered) register_exit_hook();
    }
    // The usual case: no statement open, nothing attributed pending. The
    // message that came starts the next statement here, and the wait is
    // outside any (its counters' address kept, no id to attribute).
    if (__builtin_expect(!timing_flags.open && pending_queryid == 0, 1)) {
        message_arrived_ns = t1;
        local_timing.add_to(local_timing.ev[idx], idx, static_cast<uint64_t>(t1 - t0));
        return r;
    }
    // A statement still open (COPY FROM STDIN, a portal suspended inside a
    // running statement) owns the wait; otherwise the message that came
    // starts the next statement here.
    uint64 qid = 0;
    if (timing_flags.open) {
        qid = ledger.current();
        ledger.add_wait(static_cast<uint64_t>(t1 - t0));
    } else {
        message_arrived_ns = t1;
    }
    add_attributed(idx, qid, t0, t1);
    return r;
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
        // out (statements_client_send()).
        if constexpr (call_never_blocks(C)) {
            if (C == kCallSend && __builtin_expect(timing_flags.open, 0) && guc_timing) sent_with_statement_open();
            return real(a...);
        } else {
            if (__builtin_expect(!wrappers_on, 1)) return real(a...);
            if constexpr (C == kCallEpollWait) {
                if (MyProc != nullptr &&
                    *static_cast<volatile uint32 *>(my_wait_event_info) == WAIT_EVENT_CLIENT_READ) {
                    if (__builtin_expect(remote_reads_labelled, 0)) return labelled_read(a...);
                    return client_read<Wrapper>(a...);
                }
            }
            return timed(a...);
        }
    }

    // kRemote: a ClientRead that waits for another server (labelled_read()),
    // timed as any other wait (begin_call<true>).
    template <bool kRemote = false>
    __attribute__((noinline)) static R timed(A... a) {
        // Anything but pg_stat_waits.timing alone in a process with its
        // PGPROC (timed_plain: explain_timing.h) takes the other path.
        if (__builtin_expect(!timed_plain, 0)) return timed_other<kRemote>(a...);
        // (my_wait_event_info is never null: PostgreSQL points it at a
        // process-local word until the process has its PGPROC.)
        uint32 info = *static_cast<volatile uint32 *>(my_wait_event_info);
        int64 t0 = begin_call<kRemote>(info);
        // errno is the real call's: nothing after it (the clock, plain
        // adds, a flush's atomic adds) calls into libc or sets it.
        R r = real(a...);
        end_call(info, index_of(info), t0);
        return r;
    }

    // Where Citus is preloaded (remote_reads_labelled): epoll_wait under
    // ClientRead. Reading no message from its own client, the backend waits
    // for another server (Citus's executor, its commit): its slot says so
    // for the sampler, and the wait is timed as any other inside the
    // statement, not as the wait for the client's next message (which would
    // end the statement). Otherwise it is that wait, timed only if timing is
    // on or an EXPLAIN armed (client_read()'s flag test).
    //
    // The slot's flag says which kind of ClientRead came last, and stays
    // until the other kind comes: the sampler reads it only beside a
    // ClientRead, and a flag cleared after each wait would leave a window
    // at both ends of every one (PostgreSQL reports the wait before the
    // call and clears it after) where a wait for the workers read as one
    // for the client. Now a sample can catch the old kind only as the
    // backend turns from one kind to the other.
    __attribute__((noinline)) static R labelled_read(A... a) {
        BackendSlot *s = my_live_slot();
        const bool remote = !pq_is_reading_msg();
        if (s != nullptr && s->remote_read != static_cast<uint8_t>(remote))
            *reinterpret_cast<volatile uint8_t *>(&s->remote_read) = remote;
        if (remote) return timed<true>(a...);
        if (!guc_timing && !any_flag()) return real(a...);
        return client_read<Wrapper>(a...);
    }

    template <bool kRemote = false>
    __attribute__((noinline)) static R timed_other(A... a) {
        if (MyProc == nullptr) return real(a...);  // postmaster, logger, a process past ProcKill
        if (explain_target == nullptr) {
            if (!timing_may_go_plain()) return real(a...);
            return timed<kRemote>(a...);
        }
        // An EXPLAIN (ANALYZE, WAITS) is running: its node gets the wait
        // too, with or without pg_stat_waits.timing.
        const uint32 info = *static_cast<volatile uint32 *>(my_wait_event_info);
        // The shared tables get their part at exit (timed_plain's callers
        // have registered the hook already).
        if (guc_timing && !exit_hook_registered) register_exit_hook();
        const int64 t0 = guc_timing ? begin_call<kRemote>(info) : now_ns();
        R r = real(a...);
        const int64 t1 = now_ns();
        const uint16_t idx = index_of(info);
        explain_target->add(idx, 1, static_cast<uint64_t>(t1 - t0));
        if (guc_timing) end_call_at(info, idx, t0, t1);
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

}  // namespace psw
#pragma GCC visibility pop
