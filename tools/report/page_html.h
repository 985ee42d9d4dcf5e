// The report's first sections (database load with the CPU line, top SQL by
// load, top blocking sessions, the comparison of two windows) and, on the
// live page of `serve`, the window and slice picker. render_report_html
// puts them first, for a file and for the live page alike.
#pragma once

#include <string>

#include "model.h"

namespace psw_report {

extern const char *const kPageCss;
std::string render_load_sections(const ReportData &d);

}  // namespace psw_report
