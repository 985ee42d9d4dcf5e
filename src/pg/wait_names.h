#pragma once

#include <cstdint>

namespace psw {
// Display names of a dense wait index (src/core/wait_catalog.h).
void index_names(uint16_t idx, const char **type, const char **name);
}  // namespace psw
