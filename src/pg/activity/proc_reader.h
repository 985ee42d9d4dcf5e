// Reads one process's published state without taking any lock that backends
// take: PGPROC fields are plain loads, the slot is copied under its seqlock,
// PostgreSQL's backend status entry (where the slot defers to it) under its
// changecount. Shared by the sampler and the SQL views.
#pragma once

#include "../shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

struct ProcSample {
    int32 pid;
    int32 leader_pid;  // 0 when not a parallel worker
    int32 backend_type;  // BackendType, -1 if unknown
    Oid datid;
    Oid usesysid;
    uint8_t state;  // SlotState
    uint32 wait_event_info;
    uint64 queryid;
    uint64 top_queryid;
    TimestampTz query_start;
    int64 wait_start_ns;  // exact timing: start of the blocking call in progress
    uint32 wait_start_info;
    // Where Citus is preloaded (citus.h): the gpid of the distributed
    // session the process serves (a parallel worker: its leader's), 0 for
    // none; and whether its ClientRead is a wait for another server, not
    // for its own client (kWaitRemoteRead).
    int64 gpid;
    bool remote_read;
};

// False when PGPROC number procno has no live process.
bool read_proc(uint32 procno, ProcSample *out);
uint32 proc_count();

// Whether PostgreSQL's own entry shows client backend pid (PGPROC number
// procno) idle: the sampler's quick skip for a backend whose slot defers to
// that entry (SlotSource kSourceServer). Plain loads, no changecount: a
// torn answer costs one full read or one skipped sample of a backend that
// is just changing state.
bool server_reports_idle(uint32 procno, int32 pid);

// What PostgreSQL's own entry of client backend pid (PGPROC number procno)
// says of its statement, whatever the backend's mode: the start, the raw
// query id (kept while idle after the statement, 0 until parse analysis
// gives one), whether it still runs, and (want_text) a key of the text
// (held_text_key over the entry's copy, truncated as pg_stat_activity's).
// False when the entry is not that process's or keeps changing.
struct ServerStatement {
    TimestampTz start;
    uint64 queryid;
    bool running;
    uint64 text_key;
};
bool read_server_statement(uint32 procno, int32 pid, bool want_text, ServerStatement *out);

// Idle client backends and idle main-loop waits of background processes,
// skipped by the sampler unless pg_stat_waits.sample_idle is on.
bool is_idle_sample(const ProcSample &s);

// Text of the backend type, or nullptr.
const char *backend_type_name(int32 backend_type);

// Wait event type/name as the views show them: 'CPU'/'CPU' for a running
// process, nullptr/nullptr for an idle one.
void wait_event_names(const ProcSample &s, const char **type, const char **name);

// Whether the current user may see queryids of processes owned by role
// (same rule as pg_stat_activity).
bool can_see_queries_of(Oid role);

// can_see_queries_of(), remembered per role for the length of one call (a
// history read has up to millions of rows).
struct VisibilityCache {
    Oid roles[32];
    bool visible[32];
    int n = 0;
    bool get(Oid role) {
        for (int i = 0; i < n; i++)
            if (roles[i] == role) return visible[i];
        bool v = can_see_queries_of(role);
        if (n < 32) {
            roles[n] = role;
            visible[n] = v;
            n++;
        }
        return v;
    }
};

}  // namespace psw
#pragma GCC visibility pop
