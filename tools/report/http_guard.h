// Who may ask serve for what: the access decision made for every request
// before any handler runs. Statement texts (/report/...) never go to a peer
// off this host unless a login is configured; /metrics and /probe carry
// only numbers and query ids and stay open, as Prometheus exporters' are.
// PostgreSQL-free.
#pragma once

#include <string>

#include "web_config.h"

namespace psw_report {

struct Request {
    std::string method;   // GET, HEAD, ...
    std::string path;     // the decoded local URI, without the query string
    std::string peer;     // the peer's address as text (IPv4, IPv6, IPv4-mapped)
    const char *authorization = nullptr;  // the Authorization header, if any
};

struct Decision {
    int status = 0;  // 0: serve it; else the status to answer with
    std::string reason;  // one line, the body of the refusal
};

// 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104; anything unparsable is not.
bool is_loopback_peer(const std::string &addr);

// /report and /report/...: the paths whose pages carry statement texts; the
// router serves the page on exactly these.
bool is_report_path(const std::string &path);

// Only GET and HEAD (405), then the basic auth of basic_auth_users on every
// path (401), then /report/... for loopback peers only when no login is
// configured (403).
Decision guard_request(const WebConfig &web, const Request &r);

// Response headers of the HTML page: no scripts, no foreign content, no
// framing, no sniffing, no referrer leaving with the page's query string.
const char *page_security_headers();

}  // namespace psw_report
