// EXPLAIN (ANALYZE, WAITS): each plan node's waits, timed exactly
// (docs/explain.md). PostgreSQL 18 and later; on older servers the option
// does not exist and nothing here is installed.
#pragma once

#include "../shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Preload: the setting that tells parallel workers their leader's EXPLAIN
// is timing them (where the option exists)...
void define_explain_settings();
// ...and the option with its hooks.
void install_explain_waits();

// The leaders' slots where their parallel workers leave the waits of
// their nodes.
extern const ShmemPart explain_part;

}  // namespace psw
#pragma GCC visibility pop
