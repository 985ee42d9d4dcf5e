// pg_wait_sampling.* settings accepted for users switching from pg_wait_sampling
// (docs/pg_wait_sampling.md, "Settings").
#pragma once

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// Defines the pg_wait_sampling.* settings unless pg_wait_sampling itself is
// in shared_preload_libraries (it defines them; a second definition would be
// an error at its load). Call from _PG_init at preload time.
void define_pg_wait_sampling_gucs();

// What the pg_wait_sampling_* functions honour, in this session:
// pg_wait_sampling.sample_cpu (processes not waiting shown) and
// pg_wait_sampling.profile_queries (which queryid: none, the top-level
// statement's, the running statement's), with pg_wait_sampling's defaults.
enum WaitSamplingQueries { kWsQueriesNone, kWsQueriesTop, kWsQueriesAll };
bool wait_sampling_sample_cpu();
WaitSamplingQueries wait_sampling_profile_queries();
// pg_wait_sampling.profile_pid (sighup): the drop-in's profile is kept per
// process. False where pg_wait_sampling itself defines the setting.
bool wait_sampling_profile_pid();

}  // namespace psw
#pragma GCC visibility pop
