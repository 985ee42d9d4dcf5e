#include "features.h"

#include "activity/citus.h"
#include "explain/explain.h"
#include "gucs.h"
#include "persistence/persistence.h"
#include "pg_wait_sampling/pg_wait_sampling.h"
#include "pg_wait_sampling/pg_wait_sampling_gucs.h"
#include "sampling/sampling.h"
#include "statements/statements.h"
#include "timing/timing.h"

namespace psw {

// The order is the order of every phase (module.cpp):
//  - settings: the statements feature's before timing's, which registers
//    the timer the statement hooks call; every pg_stat_waits.* setting
//    before the prefix is reserved;
//  - shared memory: the core part first (it sets psw::shared), persistence
//    after the parts it loads the saved statistics into, the
//    pg_wait_sampling drop-in after persistence (its first baseline is the
//    loaded profile);
//  - hooks and start: as listed (no two features share a hook installed
//    at preload); citus's start (is Citus preloaded?) before timing's,
//    which labels Citus's waits for other servers when it is.
static const Feature features[] = {
    // name               settings                       shared memory                              hooks at preload         start
    {"core",              define_gucs,                   {&core_part, nullptr},                     nullptr,                 nullptr},
    {"citus",             nullptr,                       {nullptr, nullptr},                        nullptr,                 citus_detect},
    {"statements",        define_statement_gucs,         {nullptr, nullptr},                        install_statement_hooks, nullptr},
    {"timing",            define_timing_gucs,            {&timing_part, &executions_part},          nullptr,                 timing_install},
    {"sampling",          nullptr,                       {&sampling_part, nullptr},                 nullptr,                 register_sampler},
    {"persistence",       nullptr,                       {&persistence_part, nullptr},              nullptr,                 nullptr},
    {"pg_wait_sampling",  define_pg_wait_sampling_gucs,  {&pg_wait_sampling_part, nullptr},         nullptr,                 nullptr},
    {"explain",           define_explain_settings,       {&explain_part, nullptr},                  install_explain_waits,   nullptr},
};

int feature_count() { return static_cast<int>(sizeof(features) / sizeof(features[0])); }
const Feature &feature_at(int i) { return features[i]; }

}  // namespace psw
