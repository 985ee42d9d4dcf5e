#pragma once

namespace psw {
void install_query_hooks();
// The calling backend's current statement ids (0 when none), for features
// that attribute work to queries (exact timing).
unsigned long long current_queryid();
unsigned long long current_top_queryid();
}  // namespace psw
