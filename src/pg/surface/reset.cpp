// pg_stat_waits_reset(): every feature's statistics back to zero, and
// stats_reset set to now. Revoked from PUBLIC in the extension script.
#include "../boundary.h"
#include "../sampling/sampling.h"
#include "../timing/timing.h"

PSW_SQL_FUNCTION(pg_stat_waits_reset)

namespace psw {

// Each feature's reset, called in order. Each one takes whatever lock its
// writers take, so a reset under load never leaves a half-cleared table.
static void (*const reset_functions[])() = {
    reset_sampling,
    timing_reset,
    executions_reset,
};

}  // namespace psw

Datum pg_stat_waits_reset(PG_FUNCTION_ARGS) {
    psw::require_preloaded();
    for (auto fn : psw::reset_functions) fn();
    psw::shared->stats_reset = GetCurrentTimestamp();
    PG_RETURN_VOID();
}
