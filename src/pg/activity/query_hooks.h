// The statement hooks (query_hooks.cpp): what each backend publishes into
// its own slot, and the id exact timing charges work to.
#pragma once

namespace psw {
// Installs the planner, executor and utility hooks and the transaction
// callbacks (postmaster, preload time).
void install_query_hooks();
// The calling backend's current statement id (0 when none), for exact
// timing's parallel workers, which run their leader's statement.
unsigned long long current_queryid();
}  // namespace psw
