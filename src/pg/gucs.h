// pg_stat_waits.* configuration (defined in gucs.cpp; README.md lists them).
#pragma once

namespace psw {

enum TrackMode { kTrackTop = 0, kTrackAll = 1 };

extern int guc_sample_period_ms;
extern int guc_history_size;
extern int guc_profile_max;
extern bool guc_sample_idle;
extern int guc_track;
extern bool guc_timing;

void define_gucs();

}  // namespace psw
