// The sampler's settings and the one sizing setting several features share
// (pg_stat_waits.profile_max also sizes exact timing's per-query table);
// defined in gucs.cpp. Each feature defines its own other settings:
// pg_stat_waits.track (statements/mode.cpp), pg_stat_waits.timing and
// capture_* (timing/statement_timing.cpp). README.md lists them.
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
