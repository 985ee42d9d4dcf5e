// pg_stat_waits.* configuration (defined in gucs.cpp; README.md lists them).
#pragma once

#include <cstdint>

namespace psw {

enum TrackMode { kTrackTop = 0, kTrackAll = 1 };

extern int guc_sample_period_ms;
extern int guc_history_size;
extern int guc_profile_max;
extern bool guc_sample_idle;
extern int guc_track;
extern bool guc_timing;
// Slow executions (pg_stat_waits_executions): the GUC in ms, and the same
// threshold in ns as the statement end compares it (INT64_MAX when off).
constexpr int kCaptureMinDurationDefaultMs = 1000;
extern int guc_capture_min_duration_ms;
extern int64_t capture_min_ns;
// Also write each kept run to the server log (one LOG line).
extern bool guc_capture_log;

void define_gucs();

}  // namespace psw
