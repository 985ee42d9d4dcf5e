#include "gucs.h"

#include "pg.h"

namespace psw {

int guc_sample_period_ms = 10;
int guc_history_size = 100000;
int guc_profile_max = 10000;
bool guc_sample_idle = false;

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
}

}  // namespace psw
