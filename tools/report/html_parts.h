// Pieces of the report's HTML shared by its sections (report_html.cpp,
// page_html.cpp): numbers, section frames, colour swatches, bars and
// statement texts that are never cut without a way to read them whole.
#pragma once

#include <string>

#include "model.h"

namespace psw_report {

std::string fmtd(const char *format, double v);
// "12.9 ms", "3.42 s", "2.1 min"; "25.9 ms" for a lag; bytes as "24.4 MB".
std::string fmt_ms(double ms);
std::string fmt_bytes(double bytes);
// The placeholder when a section cannot be shown, else "".
std::string unavailable_html(const Availability &av);
std::string section_html(const char *id, const std::string &title, const std::string &body);
std::string type_swatch(const std::string &wait_event_type);
std::string pct_bar(double fraction);
// A statement's text in a table cell: short texts whole; long ones start
// with their beginning, marked as cut, and open to the full text.
std::string statement_html(const std::string &text, const std::string &missing);
// A clock time (HH:MM:SS) of an epoch in the server's time zone.
std::string clock_text(double epoch, double utc_offset_s);
// Percent-encoding for a URL query value.
std::string url_encode(const std::string &s);

}  // namespace psw_report
