// pg_stat/pg_stat_waits.stat: what survives a clean restart.
#pragma once

#include "../shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {
// Loads the file at shared-memory creation and registers the save at
// postmaster exit (a crash discards the statistics). Listed in
// features.cpp after the parts it loads into, so they exist when it loads.
extern const ShmemPart persistence_part;
}  // namespace psw
#pragma GCC visibility pop
