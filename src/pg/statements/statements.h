// Statements: which statement each backend runs, and where it begins and
// ends, in every mode (docs/architecture.md, "Statement attribution"). The
// hooks publish it into the backend's own slot and tell exact timing the
// boundaries through the StatementTimer it registers (timer.h).
#pragma once

#include "timer.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Preload (postmaster): pg_stat_waits.track, then the hooks every mode
// needs; the tracker's own hooks and callbacks come when a backend first
// needs them.
void define_statement_gucs();
void install_statement_hooks();

// The calling backend's current statement id (0 when none), for exact
// timing's parallel workers, which run their leader's statement.
unsigned long long current_queryid();

// From exact timing's wrappers. The backend is about to wait for its
// client's next message (ClientRead) with a timed statement still open.
void statements_client_read();
// The backend sends to its client, outside any wait event, with a timed
// statement still open.
void statements_client_send();

}  // namespace psw
#pragma GCC visibility pop
