// The statement hooks (query_hooks.cpp): what each backend publishes into
// its own slot, and the id exact timing charges work to.
#pragma once

namespace psw {
// Installs the hooks every mode needs (postmaster, preload time); the
// tracker's own hooks and callbacks come when a backend first needs them.
void install_query_hooks();
// GUC assign hooks of pg_stat_waits.timing and pg_stat_waits.track (the
// new value, before PostgreSQL stores it).
void query_hooks_assign_timing(bool on);
void query_hooks_assign_track(int track);
// The calling backend's current statement id (0 when none), for exact
// timing's parallel workers, which run their leader's statement.
unsigned long long current_queryid();
// Exact timing: the backend is about to wait for its client's next message
// (ClientRead) with a timed statement still open.
void query_hooks_client_read();
// Exact timing: the backend sends to its client with a timed statement
// still open.
void query_hooks_client_send();
}  // namespace psw
