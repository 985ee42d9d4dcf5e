// The list of shared-memory parts and per-feature start-up (one place to
// add a feature: append it in shmem_parts.cpp).
#pragma once

#include "shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Each feature's part (defined in its own file).
extern const ShmemPart core_part;

int shmem_part_count();
const ShmemPart &shmem_part_at(int i);

// Called once from _PG_init (postmaster, preload time) after the core hooks:
// registers background workers, interposition, etc.
void start_features();

}  // namespace psw
#pragma GCC visibility pop
