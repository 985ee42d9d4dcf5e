#include "proc_reader.h"

#include "../wait_names.h"

namespace psw {

uint32 proc_count() {
    return ProcGlobal ? Min(ProcGlobal->allProcCount, shared ? shared->num_slots : 0) : 0;
}

// PostgreSQL's backend status entry of a process (where it sits depends on
// the release: compat_backend_status_index), checked against its pid.
static int32 lookup_backend_type(uint32 procno, const volatile PGPROC *proc, int32 pid) {
    if (backend_status_array == nullptr) return -1;
    int i = compat_backend_status_index(procno, proc);
    if (i >= 0 && i < backend_status_slots) {
        const volatile PgBackendStatus *e = &backend_status_array[i];
        if (e->st_procpid == pid) return e->st_backendType;
    }
    for (int j = compat_backend_status_scan_from(); j < backend_status_slots; j++) {
        const volatile PgBackendStatus *e = &backend_status_array[j];
        if (e->st_procpid == pid) return e->st_backendType;
    }
    return -1;
}

static bool read_slot(uint32 procno, int32 pid, SlotData *out) {
    if (procno >= shared->num_slots) return false;
    if (!shared->slots[procno].pub.read(out)) return false;
    return out->pid == pid;
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
    out->backend_type = lookup_backend_type(procno, proc, pid);
    if (out->backend_type < 0) return false;
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
    SlotData stmt;
    bool have_stmt = slot_procno == procno ? have_own : read_slot(slot_procno, slot_pid, &stmt);
    if (slot_procno == procno) stmt = own;

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

    const volatile BackendSlot *slot = &shared->slots[procno];
    out->wait_start_ns = slot->wait_start_ns;
    out->wait_start_info = slot->wait_start_info;
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
    if (s.wait_event_info != 0) {
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
