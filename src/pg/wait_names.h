// Display names of wait events for every view: never NULL for a real wait,
// never an ERROR, the same text in the sampled and the exact views.
#pragma once

#include <cstdint>

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Names of a wait_event_info (non-zero): PostgreSQL's own where the server
// names the event, else '<class>'/'other' (or the server's placeholder for
// an extension LWLock tranche this process does not know). Never NULL.
void wait_info_names(uint32_t info, const char **type, const char **name);

// Display names of a dense wait index (src/core/wait_catalog.h):
// PostgreSQL's names, 'CPU'/'CPU', 'Unreported'/<call>, '<class>'/'other'
// for a class's overflow slot and for slots the server has no event for.
// Never NULL.
void index_names(uint16_t idx, const char **type, const char **name);

// Whether the index stands for an event this server names (listed by
// pg_stat_waits_wait_events()): CPU, the Unreported calls and every event
// the server has a name for; not the overflow ('other') rows.
bool index_is_listed(uint16_t idx);

// The index whose display names are (type, name), or -1. A class's
// 'other' is its overflow slot.
int find_wait_index(const char *type, const char *name);

}  // namespace psw
#pragma GCC visibility pop
