// pg_wait_sampling.* settings accepted for users switching from pg_wait_sampling
// (see docs/exporters.md, "pg_wait_sampling compatibility").
#pragma once

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Defines the pg_wait_sampling.* settings unless pg_wait_sampling itself is
// in shared_preload_libraries (it defines them; a second definition would be
// an error at its load). Call from _PG_init at preload time.
void define_wait_sampling_gucs();

}  // namespace psw
#pragma GCC visibility pop
