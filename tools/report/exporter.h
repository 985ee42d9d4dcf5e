// `pg_stat_waits_report serve`: a Prometheus exporter (prometheus-cpp pull)
// for one or many servers. Each target keeps one connection, re-opened on
// the next scrape after any failure; what a scrape reads is in exporter.cpp.
#pragma once

#include "cli.h"

namespace psw_report {

// Runs until SIGTERM or SIGINT. Exit status as main's: 1 when the listen
// address cannot be bound or the config is unreadable, 2 for a bad config.
int run_serve(const Options &o);

}  // namespace psw_report
