// The C side of the pg_wait_sampling drop-in (extension/dropin/): its
// profile, which pg_wait_sampling_reset_profile() empties without touching
// anything of pg_stat_waits' own (wait_sampling_profile.cpp), and its
// current and history readers (wait_sampling_views.cpp).
#pragma once

#include "../shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// The baseline of the drop-in's profile: a copy of pg_stat_waits' profile
// taken at the drop-in's last reset (and at server start). Placed after
// persistence_part, so that the profile loaded from the stat file is the
// first baseline: the drop-in's profile starts empty at each start, as
// pg_wait_sampling's does.
extern const ShmemPart wait_sampling_part;

}  // namespace psw
#pragma GCC visibility pop
