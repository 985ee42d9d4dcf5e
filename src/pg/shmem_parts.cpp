#include "shmem_parts.h"

#include "explain/explain.h"
#include "persistence/persistence.h"
#include "sampling/sampling.h"
#include "pg_wait_sampling/pg_wait_sampling.h"
#include "timing/timing.h"

namespace psw {

// Order matters: core_part comes first (it sets psw::shared), and
// persistence_part after the parts it loads the saved statistics into;
// pg_wait_sampling_part follows it (its first baseline is the loaded profile).
static const ShmemPart *const parts[] = {
    &core_part,
    &timing_part,
    &executions_part,
    &sampling_part,
    &persistence_part,
    &pg_wait_sampling_part,
    &explain_part,
};

int shmem_part_count() { return static_cast<int>(sizeof(parts) / sizeof(parts[0])); }
const ShmemPart &shmem_part_at(int i) { return *parts[i]; }

void start_features() {
    timing_install();  // exact timing: GOT patching, postmaster only
    register_sampler();
}

}  // namespace psw
