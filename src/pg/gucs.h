// The sampler's settings and the one sizing setting several features share
// (pg_stat_waits.profile_max also sizes exact timing's per-query table);
// defined in gucs.cpp: sample_period, history_size, profile_max,
// sample_idle. Each feature defines its own other settings, each called
// from _PG_init (module.cpp):
//   pg_stat_waits.track                      statements/mode.cpp
//   pg_stat_waits.timing, capture_min_duration, capture_log
//                                            timing/statement_timing.cpp
//   pg_stat_waits.explain_token (hidden, 18+: EXPLAIN's parallel workers)
//                                            explain/arming.cpp
//   pg_wait_sampling.history_size, history_period, profile_period,
//     profile_pid, profile_queries, sample_cpu (the drop-in's, unless
//     pg_wait_sampling itself is preloaded)  wait_sampling_gucs.cpp
// README.md and docs/reference.md list the pg_stat_waits.* ones users set;
// docs/exporters.md the pg_wait_sampling.* ones.
#pragma once

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

extern int guc_sample_period_ms;
extern int guc_history_size;
extern int guc_profile_max;
extern bool guc_sample_idle;

void define_gucs();

}  // namespace psw
#pragma GCC visibility pop
