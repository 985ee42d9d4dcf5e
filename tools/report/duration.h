// Durations given on the command line: "90" (seconds), "30s", "5min", "1h",
// "2d", "1h30min". Parsed here (not by the server) so that a typo is a usage
// error before connecting, and the chart's bucket width is known up front.
#pragma once

#include <optional>
#include <string>

namespace psw_report {

// Seconds, or nullopt when the text is not a positive duration.
std::optional<double> parse_duration(const std::string &text);

// A PostgreSQL interval literal for a number of seconds ("3600 seconds").
std::string interval_literal(double seconds);

// Short human form: "1h", "5min", "1h 30min", "45s", "250ms".
std::string format_duration(double seconds);

// A "nice" bucket for about `points` buckets over `window_s` seconds:
// 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 6, 12 h, 1 d.
double auto_bucket(double window_s, int points = 60);

}  // namespace psw_report
