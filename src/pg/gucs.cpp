#include "gucs.h"

#include "pg.h"
#include "activity/query_hooks.h"

namespace psw {

int guc_sample_period_ms = 10;
int guc_history_size = 100000;
int guc_profile_max = 10000;
bool guc_sample_idle = false;
int guc_track = kTrackTop;
bool guc_timing = false;

static const struct config_enum_entry track_options[] = {
    {"top", kTrackTop, false},
    {"all", kTrackAll, false},
    {nullptr, 0, false},
};

// The statement hooks change mode when these change (activity/query_hooks.cpp).
static void assign_track(int newval, void *) { query_hooks_assign_track(newval); }
static void assign_timing(bool newval, void *) { query_hooks_assign_timing(newval); }

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
    MarkGUCPrefixReserved("pg_stat_waits");
}

}  // namespace psw
