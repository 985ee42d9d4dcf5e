#include "gucs.h"

#include "pg.h"
#include "activity/query_hooks.h"
#include "timing/timing.h"

namespace psw {

int guc_sample_period_ms = 10;
int guc_history_size = 100000;
int guc_profile_max = 10000;
bool guc_sample_idle = false;
int guc_track = kTrackTop;
bool guc_timing = false;
int guc_capture_min_duration_ms = kCaptureMinDurationDefaultMs;
int64_t capture_min_ns = static_cast<int64_t>(kCaptureMinDurationDefaultMs) * 1000000;
bool guc_capture_log = false;

// The statement-end check compares nanoseconds: keep them next to the GUC
// (off = a threshold no statement reaches).
static void assign_capture_min_duration(int newval, void *) {
    capture_min_ns = newval < 0 ? INT64_MAX : static_cast<int64_t>(newval) * 1000000;
}

static const struct config_enum_entry track_options[] = {
    {"top", kTrackTop, false},
    {"all", kTrackAll, false},
    {nullptr, 0, false},
};

// The statement hooks change mode when these change (activity/query_hooks.cpp).
// Timing turned off publishes what the wrappers had not flushed yet: with it
// off they never reach another flush point.
static void assign_track(int newval, void *) { query_hooks_assign_track(newval); }
static void assign_timing(bool newval, void *) {
    if (!newval) timing_flush_own();
    query_hooks_assign_timing(newval);
}

void define_gucs() {
    DefineCustomIntVariable("pg_stat_waits.sample_period",
                            "Sampling period of the pg_stat_waits sampler; 0 idles the sampler.", nullptr,
                            &guc_sample_period_ms, 10, 0, 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
                            nullptr);
    DefineCustomIntVariable("pg_stat_waits.history_size", "Capacity of the sampled history ring, in samples.",
                            nullptr, &guc_history_size, 100000, 1000, 50000000, PGC_POSTMASTER, 0, nullptr,
                            nullptr, nullptr);
    DefineCustomIntVariable("pg_stat_waits.profile_max",
                            "Maximum distinct keys in the sampled profile; overflow is counted in profile_dropped.",
                            nullptr, &guc_profile_max, 10000, 100, 10000000, PGC_POSTMASTER, 0, nullptr, nullptr,
                            nullptr);
    DefineCustomBoolVariable("pg_stat_waits.sample_idle",
                             "Also sample idle client backends and idle background processes.", nullptr,
                             &guc_sample_idle, false, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomEnumVariable("pg_stat_waits.track",
                             "Which statement's queryid is attributed: top-level only, or nested statements too.",
                             nullptr, &guc_track, kTrackTop, track_options, PGC_SUSET, 0, nullptr, assign_track,
                             nullptr);
    DefineCustomBoolVariable("pg_stat_waits.timing", "Time every wait and every query exactly.", nullptr,
                             &guc_timing, false, PGC_SUSET, 0, nullptr, assign_timing, nullptr);
    DefineCustomIntVariable("pg_stat_waits.capture_min_duration",
                            "With exact timing, keep top-level statements running at least this long in "
                            "pg_stat_waits_executions; -1 turns it off.",
                            nullptr, &guc_capture_min_duration_ms, kCaptureMinDurationDefaultMs, -1, INT_MAX,
                            PGC_SUSET, GUC_UNIT_MS, nullptr, assign_capture_min_duration, nullptr);
    DefineCustomBoolVariable("pg_stat_waits.capture_log",
                             "Also write each run kept in pg_stat_waits_executions to the server log.", nullptr,
                             &guc_capture_log, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    MarkGUCPrefixReserved("pg_stat_waits");
}

}  // namespace psw
