// The self-contained HTML report: inline CSS and SVG, no script, no external
// reference, so it can be mailed or attached to a ticket as one file.
#pragma once

#include <string>

#include "model.h"

namespace psw_report {

// The sentence shown in place of a section whose server object is missing.
extern const char *const kNotAvailable;

std::string render_report_html(const ReportData &d);

}  // namespace psw_report
