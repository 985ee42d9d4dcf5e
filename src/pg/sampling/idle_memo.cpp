// Which processes a sampler tick may skip as idle without reading them in
// full, and the prefetching of what it reads: the quick idle test, and the
// idle memo in front of it.
//
// Why a memo: at 1,000 idle connections the quick test still touches five
// cache lines per backend and tick (PGPROC's pid and wait_event_info lines,
// pg_stat_waits' slot, PostgreSQL's st_procpid and st_state lines), and the
// PGPROC array and the status entries are far larger than the caches. The
// memo, in the sampler's own memory, remembers per PGPROC number a client
// backend last seen idle: its pid, its backend status entry and that
// entry's st_changecount while it said STATE_IDLE. PostgreSQL bumps the
// count on every write of the entry (pgstat_report_activity() at every
// statement and at every return to idle, the entry's start and end), so
// the same count and pid mean the same idle spell: the next tick reads that
// line and the wait event line only. The wait event is still read because
// an idle backend can wait at work without reporting any activity (its
// idle stats flush, a sinval catch-up, delivering NOTIFYs): the full read
// samples those, as before.
//
// What is never remembered, so always read as before: any other backend
// type (an idle checkpointer or a standby's startup process is skipped for
// its Activity-class wait, which says nothing about its next tick; a
// logical replication worker reports STATE_IDLE too), an entry in any
// other state (STATE_DISABLED under track_activities = off, whose entry no
// longer changes at statements), a process the late-id watch follows
// (idle_scan() asks the watch first). A slot reused by a new process
// fails the check: the old process's exit and the new one's start both
// write the entry. With pg_stat_waits.sample_idle on nothing is skipped.
#include "sampling.h"

#include "../activity/proc_reader.h"

namespace psw {

namespace {

struct IdleMemo {
    // The entry's st_changecount (its first line): a pointer, not the
    // entry's index, so that the skip computes no address.
    const volatile int *changecount_at;
    int32 pid;  // 0: nothing remembered
    int changecount;  // the entry's st_changecount while it said STATE_IDLE
};

IdleMemo *memo = nullptr;  // per procno
// Per procno: a client seen idle before its first statement (its slot is
// not written yet), so the quick test does not look its type up again.
int32 *known_idle_pid = nullptr;
#ifdef PSW_TEST_HOOKS
int64 tick_memo_skips = 0;
#endif

}  // namespace

void idle_skip_init(uint32 capacity) {
    memo = static_cast<IdleMemo *>(MemoryContextAllocZero(TopMemoryContext, sizeof(IdleMemo) * capacity));
    known_idle_pid = static_cast<int32 *>(MemoryContextAllocZero(TopMemoryContext, sizeof(int32) * capacity));
}

// The rule of the full read (proc_reader.cpp's waits_at_work): an idle
// client backend in a wait for anything but its client or an idle sleep is
// at work, and sampled. ClientRead, the usual case, is asked first.
static inline bool idle_waits_at_work(uint32 info) {
    if (info == WAIT_EVENT_CLIENT_READ) return false;
    const uint32 cls = info & 0xFF000000U;
    return info != 0 && cls != PG_WAIT_CLIENT && cls != PG_WAIT_ACTIVITY;
}

// Whether the memo of procno still holds for pid, the process now in its
// PGPROC: the same pid, its entry's changecount unchanged (so the entry,
// st_procpid and STATE_IDLE included, is as remember() read it), and the
// process not waiting at work. A stale memo is dropped.
static inline bool memo_says_idle(IdleMemo &m, int32 pid, const volatile PGPROC *proc) {
    if (m.pid != pid || *m.changecount_at != m.changecount) {
        m.pid = 0;
        return false;
    }
    return !idle_waits_at_work(proc->wait_event_info);
}

// Remembers client backend pid of procno, just found idle, if its entry
// says STATE_IDLE under a stable changecount.
static void remember(uint32 procno, int32 pid) {
    IdleMemo &m = memo[procno];
    m.pid = 0;
    if (backend_status_array == nullptr) return;
    int i = compat_backend_status_index(procno, &ProcGlobal->allProcs[procno]);
    if (i < 0 || i >= backend_status_slots) return;
    volatile PgBackendStatus *e = &backend_status_array[i];
    int before, after;
    pgstat_begin_read_activity(e, before);
    const bool idle_client = e->st_procpid == pid && e->st_backendType == B_BACKEND && e->st_state == STATE_IDLE;
    pgstat_end_read_activity(e, after);
    if (idle_client && pgstat_read_activity_complete(before, after)) m = IdleMemo{&e->st_changecount, pid, before};
}

// The quick test for the common case of many idle client connections: a
// process (pid, not 0, read from its PGPROC by the caller) whose own slot
// says idle while it waits in ClientRead is skipped after three loads (wait
// event, slot state, pid) instead of a full read_proc. Anything else (stale
// slot, parallel worker, torn read) takes the full path, which applies the
// same rule (is_idle_sample) with every field.
static bool quick_idle(uint32 procno, int32 pid) {
    const volatile PGPROC *proc = &ProcGlobal->allProcs[procno];
    if (proc->wait_event_info != WAIT_EVENT_CLIENT_READ) return false;
    const SeqLocked<SlotData> &pub = shared->slots[procno].pub;
    bool even;
    uint32 before = pub.seq.read_begin(&even);
    if (!even) return false;
    const volatile SlotData *d = &pub.data;
    int32 slot_pid = d->pid;
    uint8_t state = d->state;
    uint8_t source = d->source;
    if (!pub.seq.validate(before)) return false;
    // A client backend in the default mode: PostgreSQL's entry says it.
    if (slot_pid == pid && source == kSourceServer) return server_reports_idle(procno, pid);
    if (slot_pid == pid) return state == kStateIdle;
    // A client that has run no statement yet has not written its slot (its
    // first statement will). Once its type is checked, remember its pid so
    // later ticks skip it on the three loads above.
    if (known_idle_pid[procno] == pid) return true;
    if (backend_status_array == nullptr) return false;
    int i = compat_backend_status_index(procno, proc);
    if (i < 0 || i >= backend_status_slots) return false;  // client backends always have a direct index
    const volatile PgBackendStatus *e = &backend_status_array[i];
    bool idle_client = e->st_procpid == pid && e->st_backendType == B_BACKEND && proc->lockGroupLeader == nullptr;
    if (idle_client) known_idle_pid[procno] = pid;
    return idle_client;
}

// The PGPROC array is far larger than the caches at 1000 connections, and a
// full read touches five lines per process: the PGPROC's ids, its wait
// event, its lock group leader, pg_stat_waits' slot and PostgreSQL's backend
// status entry (its state line too, for a client backend in the default
// mode). Their misses are made to overlap in two steps, so that an empty
// PGPROC (most of them where max_connections is far above the connections)
// costs a few instructions and no more: kFar processes ahead the two
// PGPROC lines every process needs (its pid's and its wait event's); kNear
// ahead, once that pid is cached, the status entry's first line for a
// remembered process (the memo points at it), and the rest for any other
// process that is there.
static constexpr uint32 kPrefetchFar = 16;
static constexpr uint32 kPrefetchNear = 8;

// always_inline: out of line, GCC finds the function free of side effects
// (a prefetch is only a hint) and deletes the call as dead code.
__attribute__((always_inline)) static inline void prefetch_live(uint32 procno, const PGPROC *p) {
    __builtin_prefetch(&p->lockGroupLeader);
    __builtin_prefetch(&shared->slots[procno]);
    if (backend_status_array == nullptr) return;
    int i = compat_backend_status_index(procno, p);
    if (i >= 0 && i < backend_status_slots) {
        __builtin_prefetch(&backend_status_array[i].st_procpid);
        // A client backend in the default mode: quick_idle() asks its
        // status entry's st_state, a few lines further on.
        __builtin_prefetch(&backend_status_array[i].st_state);
    }
}

template <bool kMemo>
__attribute__((always_inline)) static inline void prefetch_near(uint32 near, const PGPROC *p, const IdleMemo *memos) {
    if (p->pid == 0) return;
    if (kMemo && memos[near].pid != 0)
        __builtin_prefetch(const_cast<const int *>(memos[near].changecount_at));
    else
        prefetch_live(near, p);
}

// One loop over the processes, so that passing an idle one costs no call:
// at 1,000 idle connections the per-process overhead is the tick. The
// tests come in the order of their cost: an empty PGPROC (its pid), the
// late-id watch (the sampler's own memory), the memo (its own memory and
// two shared lines), the quick test (four). A watch on a process gone
// stays until its PGPROC is taken again or its minute runs out, whichever
// the next full read of that PGPROC sees first (late_ids_observe()).
// kMemo: a template parameter, so that neither loop tests it per process.
template <bool kMemo>
static uint32 scan(uint32 from, uint32 nprocs) {
    const PGPROC *const procs = ProcGlobal->allProcs;
    IdleMemo *const memos = memo;
    const int32 *const watched = late_ids_pid;
    const PGPROC *p = &procs[from];
    for (uint32 procno = from; procno < nprocs; procno++, p++) {
        if (procno + kPrefetchFar < nprocs) {
            __builtin_prefetch(&p[kPrefetchFar].pid);
            __builtin_prefetch(&p[kPrefetchFar].wait_event_info);
            prefetch_near<kMemo>(procno + kPrefetchNear, &p[kPrefetchNear], memos);
        } else if (procno + kPrefetchNear < nprocs) {
            prefetch_near<kMemo>(procno + kPrefetchNear, &p[kPrefetchNear], memos);
        }
        const volatile PGPROC *proc = p;
        const int32 pid = proc->pid;
        if (pid == 0) continue;  // no process: nothing to sample
        if (watched[procno] != 0) return procno;
        if (kMemo && memo_says_idle(memos[procno], pid, proc)) {
#ifdef PSW_TEST_HOOKS
            tick_memo_skips++;
#endif
            continue;
        }
        if (!quick_idle(procno, pid)) return procno;
        if (kMemo) remember(procno, pid);
    }
    return nprocs;
}

uint32 idle_scan(uint32 from, uint32 nprocs, bool sample_idle, bool use_memo) {
    if (sample_idle) return from < nprocs ? from : nprocs;
    return use_memo ? scan<true>(from, nprocs) : scan<false>(from, nprocs);
}

#ifdef PSW_TEST_HOOKS
void idle_memo_tick_end() {
    __atomic_store_n(&sampling->idle_memo_skips_last, tick_memo_skips, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sampling->idle_memo_skips, tick_memo_skips, __ATOMIC_RELAXED);
    tick_memo_skips = 0;
}
#endif

}  // namespace psw
