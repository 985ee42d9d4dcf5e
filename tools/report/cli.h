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
    // The window: --since back from now, or --from [--to] (timestamps the
    // server parses, or epoch seconds); --compare a baseline: a duration
    // (the same window that much earlier, e.g. 1d), "prev" (the window just
    // before) or FROM..TO.
    std::string from, to, compare;
    std::string slice = "class";  // what the load chart stacks by (load_model.h)
    std::string queryid;          // the live page's slow runs of one statement
    bool version = false;
    // top
    double interval_s = 1;
    bool once = false;
    int iterations = 0;  // plain mode: stop after n refreshes (0 = until killed)
    bool plain = false;  // force plain output even on a terminal
    bool help = false;
    // serve
    std::string listen = ":9866";
    std::string config_path;                                  // NAME = DSN lines
    std::string web_config_path;  // exporter-toolkit web config: TLS, basic auth (web_config.h)
    std::vector<std::pair<std::string, std::string>> targets;  // --target NAME=DSN
    int histogram_events = 64;  // most events with a duration histogram, per target
    double slow_interval_s = 60;  // per-query timing table read at most this often
    bool top_given = false;     // --top given (serve's default is 20)
};

struct ParseResult {
    Options options;
    std::string error;  // non-empty: a usage error to print before the usage text
};

ParseResult parse_args(const std::vector<std::string> &args);
std::string usage_text();
// `serve --help`: who may read what comes first.
std::string serve_usage_text();
// "pg_stat_waits_report (pg_stat_waits) 1.2": the extension version whose
// objects this build knows; older ones are read as far as they go.
std::string version_text();

}  // namespace psw_report
