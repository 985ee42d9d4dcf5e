#include "shmem_parts.h"

#include "timing.h"

namespace psw {

// Order matters only in that core_part comes first: it sets psw::shared.
static const ShmemPart *const parts[] = {
    &core_part,
    &timing_part,
};

int shmem_part_count() { return static_cast<int>(sizeof(parts) / sizeof(parts[0])); }
const ShmemPart &shmem_part_at(int i) { return *parts[i]; }

void start_features() {
    timing_install();  // exact timing: GOT patching, postmaster only
}

}  // namespace psw
