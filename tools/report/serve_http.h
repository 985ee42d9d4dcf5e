// serve's HTTP side: civetweb (through prometheus-cpp's Exposer) with its
// limits, TLS and the access guard in front of every path; the routes
// /, /metrics, /probe?target=NAME and /report/NAME.
#pragma once

#include <prometheus/metric_family.h>

#include <functional>
#include <string>
#include <vector>

#include "web_config.h"

namespace psw_report {

struct ServeTarget {
    std::string name, conninfo;
    int top_n = 20;
    std::function<std::vector<prometheus::MetricFamily>()> collect;  // one scrape of this target
};

// The limits every listener gets (docs/exporters.md states them): a slow or
// stuck client holds one worker for at most kRequestTimeoutMs, and with more
// workers than that kind of client takes, /metrics keeps answering.
constexpr int kWorkers = 64;                // requests served at once; more wait in the queue
constexpr int kConnectionQueue = 64;        // accepted connections waiting for a worker
constexpr int kRequestTimeoutMs = 10000;    // whole request head (and TLS handshake) within this
constexpr int kMaxRequestBytes = 8192;      // request line and headers (larger: 413)

// One line on stderr (the journal, under systemd), from any thread.
void serve_log(const std::string &s);

// Serves until SIGTERM or SIGINT; returns main's exit status (1: cannot
// listen or start TLS). web must already be validated; tls_ctx is the
// SSL_CTX made from it (nullptr without TLS).
int serve_http(const std::string &listen, const WebConfig &web, void *tls_ctx, std::vector<ServeTarget> targets);

}  // namespace psw_report
