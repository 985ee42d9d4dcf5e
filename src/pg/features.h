// The library's features, one entry each: what _PG_init walks. A new
// feature is one more entry in features.cpp (its settings, its
// shared-memory parts, its hooks, its start), nothing else.
#pragma once

#include "shared_state.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

struct Feature {
    const char *name;
    // Its settings (DefineCustom*Variable), at preload; nullptr: none.
    void (*define_settings)();
    // Its shared-memory parts, in the order they are initialized; unused
    // places are nullptr.
    const ShmemPart *parts[2];
    // The hooks it installs at preload; nullptr: none. (Hooks a feature
    // installs later, when a backend first needs them, are listed with
    // the reason in docs/architecture.md, "Hooks".)
    void (*install_hooks)();
    // Its start, once every feature's settings, parts and hooks are in
    // place (postmaster, preload): a background worker, the GOT patch.
    void (*start)();
};

int feature_count();
const Feature &feature_at(int i);

// The core part (module.cpp): the global state and one slot per PGPROC.
extern const ShmemPart core_part;

}  // namespace psw
#pragma GCC visibility pop
