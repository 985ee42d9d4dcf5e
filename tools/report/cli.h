// Command line of pg_stat_waits_report. libpq's connection options (-h -p -U
// -d) and, for what is not given, libpq's environment (PGHOST, PGPORT, ...).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace psw_report {

struct Options {
    std::string command;  // "report", "top" or "serve"
    std::string host, port, user, dbname;
    // report
    double since_s = 3600;
    double bucket_s = 0;  // 0: chosen from the window
    std::string html_path;
    int top_n = 15;
    // top
    double interval_s = 1;
    bool once = false;
    int iterations = 0;  // plain mode: stop after n refreshes (0 = until killed)
    bool plain = false;  // force plain output even on a terminal
    bool help = false;
    // serve
    std::string listen = ":9866";
    std::string config_path;                                  // NAME = DSN lines
    std::vector<std::pair<std::string, std::string>> targets;  // --target NAME=DSN
    int histogram_events = 64;
    double slow_interval_s = 60;  // per-query timing table read at most this often  // most events with a duration histogram, per target
    bool top_given = false;     // --top given (serve's default is 20)
};

struct ParseResult {
    Options options;
    std::string error;  // non-empty: a usage error to print before the usage text
};

ParseResult parse_args(const std::vector<std::string> &args);
std::string usage_text();

}  // namespace psw_report
