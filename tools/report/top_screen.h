// The live view's screen as text lines, from one snapshot: shared by the
// full-screen terminal mode and the plain mode used when stdout is not a
// terminal. Pure function of its input (unit-tested).
#pragma once

#include <string>
#include <vector>

#include "model.h"

namespace psw_report {

// Lines of at most `width` columns (counted in characters, UTF-8 aware);
// at most `height` lines when height > 0.
std::vector<std::string> render_top_screen(const TopSnapshot &s, int width, int height);

// Number of terminal columns a UTF-8 string takes (one per code point).
size_t display_width(const std::string &s);
// Cuts a UTF-8 string to at most `cols` code points.
std::string fit_width(const std::string &s, size_t cols);
// Pids from "12,34" (as the live query returns a session's blockers);
// anything that is not a pid is skipped.
std::vector<int> parse_pid_list(const std::string &s);
// How the live view shows a blocked session's blockers: "←12,34" ("" if none).
std::string blockers_cell(const std::vector<int> &pids);

// A bar of `width` cells for fraction 0..1 with eighth-block precision.
std::string block_bar(double fraction, int width);

}  // namespace psw_report
