#include "http_guard.h"

#include <arpa/inet.h>

#include <cstring>

#include "basic_auth.h"

namespace psw_report {

bool is_loopback_peer(const std::string &addr) {
    unsigned char a[16];
    if (inet_pton(AF_INET, addr.c_str(), a) == 1) return a[0] == 127;
    if (inet_pton(AF_INET6, addr.c_str(), a) != 1) return false;
    static const unsigned char v6_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(a, v6_loopback, 16) == 0) return true;
    return std::memcmp(a, v4_mapped, 12) == 0 && a[12] == 127;
}

bool is_report_path(const std::string &path) { return path == "/report" || path.compare(0, 8, "/report/") == 0; }

Decision guard_request(const WebConfig &web, const Request &r) {
    if (r.method != "GET" && r.method != "HEAD") return {405, "only GET and HEAD are served"};
    if (!web.users.empty() && !basic_auth_ok(web.users, r.authorization))
        return {401, "a user and password of the web config's basic_auth_users are required"};
    if (is_report_path(r.path) && !web.has_login() && !is_loopback_peer(r.peer))
        return {403,
                "the report page shows statement texts: without a login in --web.config.file it answers only "
                "this host (127.0.0.0/8, ::1); put a reverse proxy with a login on this host or configure one"};
    return {};
}

const char *page_security_headers() {
    return "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           "form-action 'self'; base-uri 'none'; frame-ancestors 'none'\r\n"
           "X-Content-Type-Options: nosniff\r\n"
           "Referrer-Policy: no-referrer\r\n"
           "X-Frame-Options: DENY\r\n";
}

}  // namespace psw_report
