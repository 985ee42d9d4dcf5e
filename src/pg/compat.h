// Every difference between the PostgreSQL majors pg_stat_waits builds on
// (15, 16, 17, 18, 19) lives here and in compat.cpp; feature code calls these
// helpers and never tests PG_VERSION_NUM itself.
//
// What differs, and where it is handled:
// - 16 moved utils/queryjumble.h to nodes/queryjumble.h, and jumbles
//   utility statements from their parse tree (15 hashes their text):
//   compat_utility_query_id().
// - 17 replaced BackendId / PGPROC.backendId / PGPROC.pgprocno with proc
//   numbers (MyProcNumber, GetNumberFromPGProc) and indexes the backend
//   status array by proc number for every process (15/16: backends at
//   backendId - 1, auxiliary processes after MaxBackends by type):
//   compat_my_procno(), compat_procno_of(), compat_backend_status_*().
// - 17 leaves unused built-in LWLock ids without a name (NULL), allocates
//   Extension wait events at run time (WaitEventExtensionNew; their names
//   live in a shared hash that raises an ERROR for an unknown id) and adds
//   the InjectionPoint class: compat_wait_event_name(),
//   compat_wait_class_sizes(), compat_register_wait_event().
// - 16 turned the lock manager's SHM_QUEUE / PROC_QUEUE lists (LOCK.procLocks,
//   LOCK.waitProcs, PGPROC.links) into dlists: compat_for_each_proclock(),
//   compat_for_each_lock_waiter().
// - 17 made pg_stat_statements record DEALLOCATE (15/16 skip it like
//   PREPARE and EXECUTE): compat_untracked_utility_id().
// - 18 dropped ExecutorRun_hook's execute_once and made queryId int64:
//   PSW_EXECUTOR_RUN_PARAMS / PSW_EXECUTOR_RUN_ARGS, compat_queryid(),
//   compat_report_query_id().
// - 19 passes the planner hook an ExplainState * (NULL outside EXPLAIN) and
//   post_parse_analyze a const JumbleState *: PSW_PLANNER_PARAMS /
//   PSW_PLANNER_ARGS, PSW_JUMBLE_STATE. It renamed PGPROC.links (the lock
//   wait queue link) to waitLink: compat_for_each_lock_waiter().
// - 19 moved buffer content locks out of LWLock/BufferContent into a
//   Buffer class, the old BufferPin class byte (BufferCleanup, BufferShared,
//   BufferShareExclusive, BufferExclusive): the class's name is the
//   server's (compat_wait_class_sizes()), its events are probed like any
//   other's. Extension LWLock tranche names moved into shared memory, and
//   an id not (yet) registered raises an ERROR: compat_wait_event_name().
// - 19's postmaster cannot look up an existing shared memory struct:
//   compat_backend_status_array().
// - 19's BGWORKER_INTERRUPTIBLE lets CREATE/ALTER/DROP DATABASE end a
//   worker connected to that database: PSW_BGWORKER_INTERRUPTIBLE (0 before).
// - 16 sorted BackendType by name (B_LOGGER is no longer the last: 16 ends at
//   B_WAL_WRITER, 17 moved B_LOGGER back to the end) and defines
//   BACKEND_NUM_TYPES; 15 has no count: PSW_BACKEND_NUM_TYPES.
// Includes pg.h (PostgreSQL's headers); feature code includes this through
// shared_state.h.
#pragma once

#include "pg.h"

#if PG_VERSION_NUM < 150000
#error "pg_stat_waits needs PostgreSQL 15 or later"
#endif

extern "C" {
#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#else
#include "utils/queryjumble.h"
#endif
}

#include "../core/wait_catalog.h"

namespace psw {

// ---- process numbers ---------------------------------------------------------

// This process's index in ProcGlobal->allProcs, -1 before it has one.
inline int compat_my_procno() {
#if PG_VERSION_NUM >= 170000
    return MyProc != nullptr ? static_cast<int>(MyProcNumber) : -1;
#else
    return MyProc != nullptr ? MyProc->pgprocno : -1;
#endif
}

// Index of proc in ProcGlobal->allProcs.
inline int compat_procno_of(const volatile PGPROC *proc) {
#if PG_VERSION_NUM >= 170000
    return static_cast<int>(proc - &ProcGlobal->allProcs[0]);
#else
    return proc->pgprocno;
#endif
}

// ---- PostgreSQL's backend status array ("Backend Status Array" in shmem) ----

// Number of entries (NumBackendStatSlots, private to backend_status.c).
inline int compat_backend_status_slots() {
#if PG_VERSION_NUM >= 170000
    return MaxBackends + NUM_AUXILIARY_PROCS;
#else
    return MaxBackends + NUM_AUXPROCTYPES;
#endif
}

// Index of the process's entry when it follows from the PGPROC alone, else
// -1: on 15/16 an auxiliary process sits after MaxBackends at a position of
// its type, found by scanning from compat_backend_status_scan_from().
inline int compat_backend_status_index(uint32 procno, const volatile PGPROC *proc) {
#if PG_VERSION_NUM >= 170000
    (void)proc;
    return procno < static_cast<uint32>(compat_backend_status_slots()) ? static_cast<int>(procno) : -1;
#else
    (void)procno;
    BackendId id = proc->backendId;
    return id > 0 && id <= MaxBackends ? id - 1 : -1;
#endif
}

// The local transaction id proc runs, InvalidLocalTransactionId while it is
// in no transaction (PGPROC.lxid until 16, PGPROC.vxid.lxid from 17). A
// plain load: the sampler reads it without the process's lock.
inline LocalTransactionId compat_proc_lxid(const volatile PGPROC *proc) {
#if PG_VERSION_NUM >= 170000
    return proc->vxid.lxid;
#else
    return proc->lxid;
#endif
}

// First entry a scan for a process without a direct index must look at
// (== compat_backend_status_slots() when every process has one).
inline int compat_backend_status_scan_from() {
#if PG_VERSION_NUM >= 170000
    return compat_backend_status_slots();
#else
    return MaxBackends;
#endif
}

// ---- executor hooks and query ids -----------------------------------------------

#if PG_VERSION_NUM >= 180000
#define PSW_EXECUTOR_RUN_PARAMS QueryDesc *qd, ScanDirection direction, uint64 count
#define PSW_EXECUTOR_RUN_ARGS qd, direction, count
#else
#define PSW_EXECUTOR_RUN_PARAMS QueryDesc *qd, ScanDirection direction, uint64 count, bool execute_once
#define PSW_EXECUTOR_RUN_ARGS qd, direction, count, execute_once
#endif

// The planner hook's parameters and the arguments that pass them on.
#if PG_VERSION_NUM >= 190000
#define PSW_PLANNER_PARAMS \
    Query *parse, const char *query_string, int cursor_options, ParamListInfo params, ExplainState *es
#define PSW_PLANNER_ARGS parse, query_string, cursor_options, params, es
#else
#define PSW_PLANNER_PARAMS Query *parse, const char *query_string, int cursor_options, ParamListInfo params
#define PSW_PLANNER_ARGS parse, query_string, cursor_options, params
#endif

// The JumbleState post_parse_analyze_hook receives (19: const).
#if PG_VERSION_NUM >= 190000
#define PSW_JUMBLE_STATE const JumbleState
#else
#define PSW_JUMBLE_STATE JumbleState
#endif
#define PSW_POST_PARSE_ANALYZE_PARAMS ParseState *pstate, Query *query, PSW_JUMBLE_STATE *jstate
#define PSW_POST_PARSE_ANALYZE_ARGS pstate, query, jstate

// A query id as the uint64 pg_stat_waits stores (18 declares them int64;
// pg_stat_statements shows the same bits as bigint on every version).
template <typename T>
inline uint64 compat_queryid(T id) {
    return static_cast<uint64>(id);
}

// PostgreSQL's own report of this backend's top-level query id
// (pgstat_report_query_id; 18 declares ids int64).
inline void compat_report_query_id(uint64 id, bool force) {
#if PG_VERSION_NUM >= 180000
    pgstat_report_query_id(static_cast<int64>(id), force);
#else
    pgstat_report_query_id(id, force);
#endif
}

// The id PostgreSQL gives a utility statement whose PlannedStmt carries
// none (pg_stat_statements zeroes a cached utility statement's queryId in
// place, so later executions of e.g. a prepared END arrive with 0): the
// same computation parse analysis did, so the id equals pg_stat_statements'.
// 15: a hash of the statement's text; 16+: the jumble of its parse tree.
uint64 compat_utility_query_id(const PlannedStmt *pstmt, const char *query_string);

// Utility statements pg_stat_statements never records under their own id,
// so pg_stat_waits does not either: EXECUTE is recorded as the prepared
// statement it runs (its executor hooks count it at the EXECUTE's level),
// PREPARE not at all (it only parses), DEALLOCATE not at all before 17.
// Returns true for those, with *id set to what their time belongs to: the
// prepared statement's query id for EXECUTE (0 if it is unknown), else 0.
// For any other statement returns false and leaves *id as it was.
bool compat_untracked_utility_id(const Node *stmt, uint64 *id);

// ---- shared memory -------------------------------------------------------------------

// Whether the postmaster can find PostgreSQL's backend status array (15-18:
// children inherit what it found); on 19 each process finds it itself.
constexpr bool compat_shmem_lookup_in_postmaster() { return PG_VERSION_NUM < 190000; }

// PostgreSQL's backend status array (private to backend_status.c), or
// nullptr where this process cannot find it. 15-18 look it up by its
// shared memory index name. 19 reworked shared memory allocation
// (ShmemRequestStruct): outside a postmaster child ShmemInitStruct only
// creates, so the postmaster and single-user mode cannot look it up; every
// process derives it from its own entry, which 17+ keeps at its proc
// number (MyBEEntry = &BackendStatusArray[MyProcNumber]).
PgBackendStatus *compat_backend_status_array(int slots);

// ---- background workers ----------------------------------------------------------

// 19: a worker with BGWORKER_INTERRUPTIBLE is terminated when CREATE, ALTER
// or DROP DATABASE needs its database free, instead of making the command
// wait (up to 5 s) and fail. Earlier releases have no such flag.
#if PG_VERSION_NUM >= 190000
#define PSW_BGWORKER_INTERRUPTIBLE BGWORKER_INTERRUPTIBLE
#else
#define PSW_BGWORKER_INTERRUPTIBLE 0
#endif

// The number of BackendType values (B_INVALID is 0): what a saved sample's
// or timing row's backend type must be below. 15 ends at B_LOGGER.
#ifdef BACKEND_NUM_TYPES
#define PSW_BACKEND_NUM_TYPES BACKEND_NUM_TYPES
#else
#define PSW_BACKEND_NUM_TYPES (B_LOGGER + 1)
#endif

// ---- wait events -------------------------------------------------------------------

// The running server's number of event ids per wait class, measured by
// probing its own name functions (minor releases append events), for
// wait_catalog_init(). Postmaster, at preload. Returns the number written.
int compat_wait_class_sizes(WaitClassSize *out, int max);

// PostgreSQL's display name of a wait event, never NULL for info != 0 and
// never an ERROR. *named is false when the server has no name for the id
// (an unused built-in LWLock id, a run-time event not (yet) registered, an
// extension LWLock tranche this process does not know, an id past the
// class's end); the text is then PostgreSQL's own placeholder ("extension",
// "unknown wait event") or "other". Reader side: may take
// WaitEventCustomLock (17+) to look up run-time event names.
const char *compat_wait_event_name(uint32 info, bool *named);
// Type name ("LWLock", ..., "???" for an unknown class); NULL for 0.
const char *compat_wait_event_type(uint32 info);

// A wait event of pg_stat_waits' own under the Extension class: 17+
// registers `name` (WaitEventExtensionNew), earlier releases have only
// PG_WAIT_EXTENSION (so does 17+ if the table of run-time events is full;
// the error is logged). Needs shared memory and a PGPROC, and must run
// outside a transaction (it may release all LWLocks after an error).
uint32 compat_register_wait_event(const char *name);

// ---- lock manager ----------------------------------------------------------------

// Calls visit(PROCLOCK *) for each holder or waiter entry of lock. The
// caller holds the lock's partition LWLock.
template <typename Visit>
inline void compat_for_each_proclock(LOCK *lock, Visit &&visit) {
#if PG_VERSION_NUM >= 160000
    // By hand: dlist_foreach and dlist_container type-check with a C-only builtin.
    dlist_head *head = &lock->procLocks;
    for (dlist_node *cur = head->head.next; cur != nullptr && cur != &head->head; cur = cur->next)
        visit(reinterpret_cast<PROCLOCK *>(reinterpret_cast<char *>(cur) - offsetof(PROCLOCK, lockLink)));
#else
    SHM_QUEUE *head = &lock->procLocks;
    PROCLOCK *pl = reinterpret_cast<PROCLOCK *>(SHMQueueNext(head, head, offsetof(PROCLOCK, lockLink)));
    while (pl != nullptr) {
        visit(pl);
        pl = reinterpret_cast<PROCLOCK *>(SHMQueueNext(head, &pl->lockLink, offsetof(PROCLOCK, lockLink)));
    }
#endif
}

// Calls visit(PGPROC *) for each process in lock's wait queue, in queue
// order, until visit returns false. The caller holds the partition LWLock.
template <typename Visit>
inline void compat_for_each_lock_waiter(LOCK *lock, Visit &&visit) {
#if PG_VERSION_NUM >= 160000
#if PG_VERSION_NUM >= 190000
    constexpr size_t link_offset = offsetof(PGPROC, waitLink);
#else
    constexpr size_t link_offset = offsetof(PGPROC, links);
#endif
    dlist_head *head = &lock->waitProcs.dlist;
    for (dlist_node *cur = head->head.next; cur != nullptr && cur != &head->head; cur = cur->next) {
        if (!visit(reinterpret_cast<PGPROC *>(reinterpret_cast<char *>(cur) - link_offset))) return;
    }
#else
    // PGPROC.links is the first member: the queue links PGPROCs directly.
    PGPROC *p = reinterpret_cast<PGPROC *>(lock->waitProcs.links.next);
    for (int i = 0; i < lock->waitProcs.size; i++) {
        if (!visit(p)) return;
        p = reinterpret_cast<PGPROC *>(p->links.next);
    }
#endif
}

}  // namespace psw
