#include "shmem_parts.h"

#include "persistence.h"
#include "sampler.h"
#include "sampling_shmem.h"

namespace psw {

// Order matters only in that core_part comes first: it sets psw::shared.
static const ShmemPart *const parts[] = {
    &core_part,
    &sampling_part,
    // Keep last: it loads the saved statistics into the parts above.
    &persistence_part,
};

int shmem_part_count() { return static_cast<int>(sizeof(parts) / sizeof(parts[0])); }
const ShmemPart &shmem_part_at(int i) { return *parts[i]; }

void start_features() { register_sampler(); }

}  // namespace psw
