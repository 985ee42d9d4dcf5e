// The C side of the pg_wait_sampling drop-in (extension/pg_wait_sampling/,
// docs/pg_wait_sampling.md): its profile, which
// pg_wait_sampling_reset_profile() empties without touching anything of
// pg_stat_waits' own (pg_wait_sampling_profile.cpp), its current and history
// readers (pg_wait_sampling_views.cpp) and the pg_wait_sampling.* settings
// (pg_wait_sampling_gucs.cpp).
#pragma once

#include "../shared_state.h"
#include "../activity/citus.h"
#include "../../core/minute_buckets.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// The drop-in's shared memory: the baseline of its profile, a copy of
// pg_stat_waits' profile taken at the drop-in's last reset (and at server
// start), and its per-process profile (pg_wait_sampling.profile_pid = on).
// Placed after persistence_part, so that the profile loaded from the stat
// file is the first baseline: the drop-in's profile starts empty at each
// start, as pg_wait_sampling's does. Its init registers the sampler's
// tick_counter that fills the per-process profile.
extern const ShmemPart pg_wait_sampling_part;

// A sampled wait as pg_wait_sampling shows it: PostgreSQL's own
// wait_event_info, without pg_stat_waits' flags (kWaitOtherQueries, and
// kWaitRemoteBit: a Citus node's Remote/OtherServer is Client/ClientRead
// there, as in pg_wait_sampling itself).
inline uint32 pgws_wait(uint32 encoded) { return encoded & ~(kWaitOtherQueries | kWaitRemoteBit); }

}  // namespace psw
#pragma GCC visibility pop
