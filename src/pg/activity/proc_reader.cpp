#include "proc_reader.h"

#include "../../core/held_waits.h"
#include "citus.h"
#include "../wait_names.h"

namespace psw {

uint32 proc_count() {
    return ProcGlobal ? Min(ProcGlobal->allProcCount, shared ? shared->num_slots : 0) : 0;
}

// PostgreSQL's backend status entry of a process (where it sits depends on
// the release: compat_backend_status_index), checked against its pid;
// nullptr when there is none. Inlined into read_proc(), the sampler's
// per-process path (read_citus() calls it too, and a call there cost the
// tick about 30 instructions per process).
__attribute__((always_inline)) static inline const volatile PgBackendStatus *find_status_entry(uint32 procno, const volatile PGPROC *proc, int32 pid) {
    if (backend_status_array == nullptr && !attach_backend_status_array()) return nullptr;
    int i = compat_backend_status_index(procno, proc);
    if (i >= 0 && i < backend_status_slots) {
        const volatile PgBackendStatus *e = &backend_status_array[i];
        if (e->st_procpid == pid) return e;
    }
    for (int j = compat_backend_status_scan_from(); j < backend_status_slots; j++) {
        const volatile PgBackendStatus *e = &backend_status_array[j];
        if (e->st_procpid == pid) return e;
    }
    return nullptr;
}

// An extension's background worker asleep in its main loop: waiting in the
// Extension class (WaitLatch(..., PG_WAIT_EXTENSION), or an event of its
// own on 17+), in no transaction, with nothing reported in its status
// entry (never set, or idle). Idle, as an auxiliary process's Activity-
// class main-loop wait is: Citus's maintenance daemon would otherwise be
// one whole active session on every node. Its real work is still sampled:
// it runs in a transaction (the daemon's deadlock detection and 2PC
// recovery), or reports itself running (pgstat_report_activity), or waits
// in another class. Only background workers in an Extension wait pay for
// the two loads (the transaction id, the entry's state).
static bool extension_worker_idle(const volatile PGPROC *proc, const volatile PgBackendStatus *e, uint32 info) {
    if ((info & 0xFF000000U) != PG_WAIT_EXTENSION) return false;
    if (compat_proc_lxid(proc) != InvalidLocalTransactionId) return false;
    const BackendState st = e->st_state;
    return st == STATE_UNDEFINED || st == STATE_IDLE;
}

// What PostgreSQL's own backend status entry says about a client backend's
// statement, read with its changecount protocol (pgstat_begin_read_activity).
struct ServerStatus {
    uint8_t state;  // SlotState
    uint64 queryid;
    TimestampTz start;
    bool running;
};

// The fields of a backend's status entry that the readers below use, and
// optionally its text (text_size bytes, NUL-terminated), copied under the
// entry's changecount. False when the entry keeps changing.
struct RawEntry {
    int32 pid;
    BackendState state;
    uint64 queryid;
    TimestampTz start;
};

static bool read_entry(uint32 procno, const volatile PGPROC *proc, char *text, int text_size, RawEntry *out) {
    if (backend_status_array == nullptr && !attach_backend_status_array()) return false;
    int i = compat_backend_status_index(procno, proc);  // client backends always have a direct index
    if (i < 0 || i >= backend_status_slots) return false;
    volatile PgBackendStatus *e = &backend_status_array[i];
    // A writer holds the count odd for a few stores; a reader that keeps
    // losing the race gives up for this tick rather than spin.
    for (int attempt = 0; attempt < 100; attempt++) {
        int before, after;
        pgstat_begin_read_activity(e, before);
        out->pid = e->st_procpid;
        out->state = e->st_state;
        out->queryid = compat_queryid(e->st_query_id);
        out->start = e->st_activity_start_timestamp;
        if (text != nullptr) {
            memcpy(text, const_cast<const char *>(e->st_activity_raw), text_size);
            text[text_size] = '\0';
        }
        pgstat_end_read_activity(e, after);
        if (pgstat_read_activity_complete(before, after)) return true;
    }
    return false;
}

static bool read_server_status(uint32 procno, const volatile PGPROC *proc, int32 pid, ServerStatus *out) {
    RawEntry r;
    if (!read_entry(procno, proc, nullptr, 0, &r) || r.pid != pid) return false;
    const BackendState st = r.state;
    const uint64 q = r.queryid;
    // Ids as the statement tracker keeps them: kept while running and
    // idle in transaction, cleared when idle or in an aborted block.
    out->queryid = 0;
    out->start = r.start;
    out->running = st == STATE_RUNNING || st == STATE_FASTPATH;
    switch (st) {
        case STATE_RUNNING:
        case STATE_FASTPATH:
            // Until parse analysis gives the new statement its id (raw
            // parsing of a message, a fast-path function call) the
            // backend is between statements, as the tracker reports it:
            // no id to charge, and not sampled as a statement's work.
            out->state = q != 0 ? kStateActive : kStateIdle;
            out->queryid = q;
            break;
        case STATE_IDLEINTRANSACTION:
            out->state = kStateIdleInXact;
            out->queryid = q;
            break;
        case STATE_IDLEINTRANSACTION_ABORTED:
            out->state = kStateIdleInXact;
            break;
        case STATE_IDLE:
            out->state = kStateIdle;
            break;
        default:  // track_activities was turned off: the backend switches to its tracker
            out->state = kStateUnknown;
            break;
    }
    return true;
}

bool read_server_statement(uint32 procno, int32 pid, bool want_text, ServerStatement *out) {
    if (procno >= proc_count()) return false;
    // The text is copied inside the changecount section, hashed after it.
    static char *text = nullptr;
    const int size = pgstat_track_activity_query_size;
    if (want_text && text == nullptr) text = static_cast<char *>(MemoryContextAlloc(TopMemoryContext, size + 1));
    RawEntry r;
    if (!read_entry(procno, &ProcGlobal->allProcs[procno], want_text ? text : nullptr, size, &r) || r.pid != pid)
        return false;
    out->start = r.start;
    out->queryid = r.queryid;
    out->running = r.state == STATE_RUNNING || r.state == STATE_FASTPATH;
    out->text_key = want_text ? held_text_key(text) : 0;
    return true;
}

bool server_reports_idle(uint32 procno, int32 pid) {
    if (backend_status_array == nullptr && !attach_backend_status_array()) return false;
    int i = compat_backend_status_index(procno, &ProcGlobal->allProcs[procno]);
    if (i < 0 || i >= backend_status_slots) return false;
    const volatile PgBackendStatus *e = &backend_status_array[i];
    return e->st_state == STATE_IDLE && e->st_procpid == pid;
}

// A slot in server mode resolved against PostgreSQL's entry: the slot's
// exception (a FETCH running its cursor's query) holds while PostgreSQL
// shows the same statement running.
static bool resolve_server(uint32 procno, const volatile PGPROC *proc, int32 pid, SlotData *d) {
    ServerStatus st;
    if (!read_server_status(procno, proc, pid, &st)) return false;
    bool exception = d->state == kStateActive && st.running && d->query_start == st.start;
    if (!exception) {
        d->queryid = st.queryid;
        d->top_queryid = st.queryid;
    }
    d->state = st.state;
    d->query_start = st.start;
    return true;
}

static bool read_slot(uint32 procno, int32 pid, SlotData *out) {
    if (procno >= shared->num_slots) return false;
    if (!shared->slots[procno].pub.read(out)) return false;
    return out->pid == pid;
}

// A wait that is neither for the client nor the idle sleep of a process
// with nothing to do.
static inline bool waits_at_work(uint32 info) {
    const uint32 cls = info & 0xFF000000U;
    return info != 0 && cls != PG_WAIT_CLIENT && cls != PG_WAIT_ACTIVITY;
}

// Where Citus is preloaded: the gpid of a client backend (of a parallel
// worker: its leader's) from its application_name, and whether its
// ClientRead is the wait for another server its slot says it is (the
// wrappers publish it: timing/wrapper.h, labelled_read()). A background
// worker has no client: its ClientRead (Citus's maintenance daemon in its
// rounds) is always another server's, as its slot says too. Other
// processes carry no gpid.
static void read_citus(uint32 procno, const volatile PGPROC *proc, const volatile PgBackendStatus *entry,
                       const volatile BackendSlot *slot, ProcSample *out) {
    if (out->leader_pid != 0) {
        const PGPROC *leader = proc->lockGroupLeader;
        const volatile PgBackendStatus *le =
            leader != nullptr ? find_status_entry(static_cast<uint32>(compat_procno_of(leader)), leader, out->leader_pid)
                              : nullptr;
        if (le != nullptr && le->st_backendType == B_BACKEND) out->gpid = citus_gpid_of_entry(le, out->leader_pid);
    } else if (out->backend_type == B_BACKEND || out->backend_type == B_BG_WORKER) {
        if (out->backend_type == B_BACKEND) out->gpid = citus_gpid_of_entry(entry, out->pid);
        out->remote_read = out->wait_event_info == WAIT_EVENT_CLIENT_READ && slot->remote_read != 0;
    }
}

bool read_proc(uint32 procno, ProcSample *out) {
    if (procno >= proc_count()) return false;
    const volatile PGPROC *proc = &ProcGlobal->allProcs[procno];
    int32 pid = proc->pid;
    if (pid == 0) return false;

    memset(out, 0, sizeof(*out));
    out->pid = pid;
    // Listed exactly while PostgreSQL lists the process in pg_stat_activity:
    // a PGPROC gets its pid before authentication and keeps it after the
    // backend status entry is gone at exit; skip both windows.
    const volatile PgBackendStatus *entry = find_status_entry(procno, proc, pid);
    if (entry == nullptr) return false;
    out->backend_type = entry->st_backendType;
    out->datid = proc->databaseId;
    out->usesysid = proc->roleId;
    out->wait_event_info = proc->wait_event_info;

    const PGPROC *leader = proc->lockGroupLeader;
    uint32 slot_procno = procno;
    int32 slot_pid = pid;
    if (leader != nullptr && leader != const_cast<const PGPROC *>(proc)) {
        // A parallel worker: it runs the leader's statement.
        out->leader_pid = leader->pid;
        slot_procno = static_cast<uint32>(compat_procno_of(leader));
        slot_pid = out->leader_pid;
    }

    SlotData own;
    bool have_own = read_slot(procno, pid, &own);
    if (have_own && own.source == kSourceServer) have_own = resolve_server(procno, proc, pid, &own);
    SlotData stmt;
    bool have_stmt = slot_procno == procno ? have_own : read_slot(slot_procno, slot_pid, &stmt);
    if (slot_procno == procno)
        stmt = own;
    else if (have_stmt && stmt.source == kSourceServer)
        have_stmt = resolve_server(slot_procno, leader, slot_pid, &stmt);

    if (have_stmt) {
        out->queryid = stmt.queryid;
        out->top_queryid = stmt.top_queryid;
        out->query_start = stmt.query_start;
    }
    if (out->leader_pid != 0)
        out->state = kStateActive;  // workers exist only while their query runs (their own slot stays idle)
    else if (have_own)
        out->state = own.state;
    else if (out->backend_type == B_BACKEND)
        out->state = kStateIdle;  // a client that has run no statement yet
    else
        out->state = kStateUnknown;
    // Whatever its own slot says (a worker that runs SQL has one; in the
    // default mode it defers to the entry, which shows no state).
    if (out->backend_type == B_BG_WORKER && out->leader_pid == 0 &&
        extension_worker_idle(proc, entry, out->wait_event_info))
        out->state = kStateIdle;
    // Between statements by its ids (no id yet: raw parsing, or parse
    // analysis of the next statement), a client backend that waits for
    // anything but its client is at work: parse analysis waiting for a
    // table another session locked (a statement queued behind a
    // migration's ACCESS EXCLUSIVE) would go unseen. Active, with no id,
    // as PostgreSQL shows it.
    if (out->state == kStateIdle && out->backend_type == B_BACKEND && waits_at_work(out->wait_event_info)) {
        out->state = kStateActive;
        // The tracker's slot knows nothing of this statement yet (track =
        // all), nor is there a slot before a backend's first statement
        // ends: PostgreSQL's entry has its start, and its id once known (a
        // Bind reports it), as server mode reads them.
        ServerStatus st;
        if ((!have_own || own.source == kSourceTracker) && read_server_status(procno, proc, pid, &st) && st.running) {
            out->queryid = st.queryid;
            out->top_queryid = st.queryid;
            out->query_start = st.start;
        }
    }

    const volatile BackendSlot *slot = &shared->slots[procno];
    out->wait_start_ns = slot->wait_start_ns;
    out->wait_start_info = slot->wait_start_info;
    if (citus_preloaded) read_citus(procno, proc, entry, slot, out);
    return true;
}

bool is_idle_sample(const ProcSample &s) {
    if (s.state == kStateIdle) return true;
    return (s.wait_event_info & 0xFF000000U) == PG_WAIT_ACTIVITY;
}

const char *backend_type_name(int32 backend_type) {
    if (backend_type < 0) return nullptr;
    return GetBackendTypeDesc(static_cast<BackendType>(backend_type));
}

void wait_event_names(const ProcSample &s, const char **type, const char **name) {
    if (s.remote_read) {
        remote_read_names(type, name);
    } else if (s.wait_event_info != 0) {
        wait_info_names(s.wait_event_info, type, name);
    } else if (s.state == kStateIdle || s.state == kStateIdleInXact) {
        *type = nullptr;
        *name = nullptr;
    } else {
        *type = "CPU";
        *name = "CPU";
    }
}

bool can_see_queries_of(Oid role) {
    Oid me = GetUserId();
    return has_privs_of_role(me, ROLE_PG_READ_ALL_STATS) || has_privs_of_role(me, role);
}

}  // namespace psw
