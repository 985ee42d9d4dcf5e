// What pg_stat_waits knows of Citus, where Citus is preloaded: the global
// pid (gpid) a backend serves, read from its application_name, and the
// switch for labelling a client backend's waits for another server.
// Nothing here names Citus's functions or reads its memory: a server
// without Citus pays one test of citus_preloaded where a gpid could be read.
#pragma once

#include "../shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Whether shared_preload_libraries names citus: set in the postmaster at
// preload (citus_detect(), the citus feature's start), inherited by every
// process. A client that sets a Citus-like application_name where Citus is
// absent changes nothing.
extern bool citus_preloaded;
void citus_detect();

// The gpid in a backend status entry's application_name (pid: the process
// it must belong to), read under the entry's changecount; 0 when none, or
// when the entry is another process's or keeps changing.
int64 citus_gpid_of_entry(const volatile PgBackendStatus *e, int32 pid);

// A client backend's ClientRead while it reads no message from its own
// client (pq_is_reading_msg() false) is a wait for another server: Citus's
// executor waits for the workers' answers, and its commit for theirs, under
// PostgreSQL's WAIT_EVENT_CLIENT_READ. Where Citus is preloaded the backend
// publishes that in its slot (BackendSlot::remote_read) and the sampled
// views show the wait as Remote/OtherServer, encoded as ClientRead with bit
// 20 set (bits 16..23 are unused by PostgreSQL; 22 and 23 are taken:
// kWaitIdleNoEvent, kWaitOtherQueries). Exact timing, the pg_wait_sampling
// drop-in and /metrics keep PostgreSQL's name.
constexpr uint32 kWaitRemoteBit = 0x00100000u;
constexpr uint32 kWaitRemoteRead = WAIT_EVENT_CLIENT_READ | kWaitRemoteBit;
inline void remote_read_names(const char **type, const char **name) {
    *type = "Remote";
    *name = "OtherServer";
}

// This backend's own gpid from its application_name setting (0: none, or
// Citus not preloaded).
int64 citus_own_gpid();

}  // namespace psw
#pragma GCC visibility pop
