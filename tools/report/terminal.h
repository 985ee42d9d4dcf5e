// The live view's terminal handling: alternate screen, raw keyboard, and a
// guaranteed restore of the terminal on q, Ctrl-C, SIGTERM or an error.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace psw_report {

// Draws `frame(width, height)` every interval until q/Q, Ctrl-C or SIGTERM.
// Returns 0 on a clean quit; a frame callback's exception is rethrown after
// the terminal is restored.
int run_fullscreen(double interval_s, const std::function<std::vector<std::string>(int, int)> &frame);

// Plain mode: prints frames separated by a blank line; stops after
// `iterations` (0 = until SIGINT/SIGTERM).
int run_plain(double interval_s, int iterations, const std::function<std::vector<std::string>()> &frame);

}  // namespace psw_report
