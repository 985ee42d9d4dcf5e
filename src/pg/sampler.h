#pragma once

namespace psw {
// Registers the sampler background worker (postmaster, preload time).
void register_sampler();
}  // namespace psw
