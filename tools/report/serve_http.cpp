#include "serve_http.h"

#include <CivetServer.h>
#include <civetweb.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>

#include "http_guard.h"
#include "live_page.h"
#include "prom_metrics.h"

namespace psw_report {

namespace {

using prometheus::MetricFamily;

// civetweb's callbacks are plain functions: what they read is set once,
// before the server starts, and never changed while it runs.
WebConfig g_web;
void *g_tls_ctx = nullptr;
std::vector<ServeTarget> g_targets;

void log_line(const std::string &s) { serve_log(s); }

const ServeTarget *find_target(const std::string &name) {
    for (const auto &t : g_targets)
        if (t.name == name) return &t;
    return nullptr;
}

// /metrics: every target, one after the other.
class AllTargets : public prometheus::Collectable {
public:
    std::vector<MetricFamily> Collect() const override {
        std::vector<std::vector<MetricFamily>> parts;
        for (const auto &t : g_targets) parts.push_back(t.collect());
        return prom::merge_families(std::move(parts));
    }
};

const char *reason_of(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 503: return "Service Unavailable";
        default: return status < 500 ? "Error" : "Internal Server Error";
    }
}

// One response; HEAD gets the headers alone.
int reply(mg_connection *c, bool head, int status, const std::string &type, const std::string &body,
          const char *extra_headers = "") {
    mg_printf(c,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-cache\r\n%s"
              "Connection: close\r\n\r\n",
              status, reason_of(status), type.c_str(), body.size(), extra_headers);
    if (!head) mg_write(c, body.data(), body.size());
    return status;
}

int route(mg_connection *c, const mg_request_info *ri, const std::string &uri, bool head) {
    const std::string html = "text/html; charset=utf-8", text = "text/plain; charset=utf-8";
    if (uri == "/") {
        std::string body = "<html><head><title>pg_stat_waits exporter</title></head><body><h1>pg_stat_waits "
                           "exporter</h1><p><a href=\"/metrics\">/metrics</a> (all targets)</p><ul>";
        for (const auto &t : g_targets)
            body += "<li>" + t.name + ": <a href=\"/report/" + t.name + "\">live report</a>, <a href=\"/probe?target=" +
                    t.name + "\">/probe?target=" + t.name + "</a></li>";
        return reply(c, head, 200, html, body + "</ul></body></html>\n", page_security_headers());
    }
    if (is_report_path(uri)) {
        const ServeTarget *t = uri.size() > 8 ? find_target(uri.substr(8)) : nullptr;
        if (!t) return reply(c, head, 404, text, "unknown target \"" + (uri.size() > 8 ? uri.substr(8) : "") + "\"\n");
        // Its own connection, per request: a page may take longer than a
        // scrape and must not hold the target's scrape lock.
        PageReply p = live_report_page(uri, ri->query_string ? ri->query_string : "", t->conninfo, std::min(t->top_n, 25));
        return reply(c, head, p.status, p.content_type, p.body, page_security_headers());
    }
    if (uri == "/probe") {
        char name[256] = "";
        int n = ri->query_string
                    ? mg_get_var(ri->query_string, std::strlen(ri->query_string), "target", name, sizeof(name))
                    : -1;
        if (n <= 0) return reply(c, head, 400, text, "target parameter missing\n");
        const ServeTarget *t = find_target(name);
        if (!t)
            return reply(c, head, 404, text,
                         "unknown target \"" + std::string(name) + "\" (targets are named in the exporter's config)\n");
        prometheus::TextSerializer ser;
        return reply(c, head, 200, "text/plain; version=0.0.4; charset=utf-8", head ? "" : ser.Serialize(t->collect()));
    }
    if (uri == "/metrics") {
        if (!head) return 0;  // prometheus-cpp's handler (compression, its own metrics)
        return reply(c, true, 200, "text/plain; version=0.0.4; charset=utf-8", "");
    }
    return reply(c, head, 404, text, "not found (paths: /, /metrics, /probe?target=NAME, /report/NAME)\n");
}

// Every request passes here first (civetweb's begin_request): the guard,
// then the routes; 0 hands /metrics on to the Exposer.
int begin_request(mg_connection *c) {
    const mg_request_info *ri = mg_get_request_info(c);
    const bool head = ri->request_method && std::strcmp(ri->request_method, "HEAD") == 0;
    try {
        Request r;
        r.method = ri->request_method ? ri->request_method : "";
        r.path = ri->local_uri ? ri->local_uri : "";
        r.peer = ri->remote_addr;
        r.authorization = mg_get_header(c, "Authorization");
        Decision d = guard_request(g_web, r);
        if (d.status == 401)
            return reply(c, head, 401, "text/plain", d.reason + "\n",
                         "WWW-Authenticate: Basic realm=\"pg_stat_waits\", charset=\"UTF-8\"\r\n");
        if (d.status == 405) return reply(c, head, 405, "text/plain", d.reason + "\n", "Allow: GET, HEAD\r\n");
        if (d.status != 0) return reply(c, head, d.status, "text/plain", d.reason + "\n");
        return route(c, ri, r.path, head);
    } catch (const std::exception &e) {
        // A bug: the log gets the exception's text, the client does not.
        log_line(std::string("request ") + (ri->local_uri ? ri->local_uri : "") + ": " + e.what());
        return reply(c, head, 500, "text/plain", "internal error (the exporter's log says what)\n");
    }
}

// civetweb's own answers to requests it cannot parse. It answers an HTTP
// version it does not speak (HTTP/2.0 on a plain request, HTTP/9.9) with
// 505: a malformed request line is the client's error, and a 5xx would
// count against the exporter in every monitor; 400 says what it is.
int http_error(mg_connection *c, int status, const char *) {
    if (status != 505) return 1;  // civetweb's own reply
    reply(c, false, 400, "text/plain", "unsupported HTTP version (HTTP/1.0 and HTTP/1.1 are served)\n");
    return 0;
}

// TLS: the context made from the web config, as it is; civetweb neither
// changes nor frees it (1 = "complete, leave it").
int external_ssl_ctx(void **ssl_ctx, void *) {
    *ssl_ctx = g_tls_ctx;
    return 1;
}

int log_message(const mg_connection *, const char *message) {
    log_line(std::string("civetweb: ") + message);
    return 1;
}

// listening_ports: each comma-separated address gets civetweb's "s" (TLS).
std::string ports_option(const std::string &listen, bool tls) {
    std::string out, item;
    size_t from = 0;
    while (true) {
        size_t comma = listen.find(',', from);
        item = listen.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        if (!item.empty() && item[0] == ':') item = item.substr(1);  // ":9866": every IPv4 address
        out += (out.empty() ? "" : ",") + item + (tls ? "s" : "");
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return out;
}

}  // namespace

void serve_log(const std::string &s) {
    static std::mutex mu;
    std::lock_guard<std::mutex> g(mu);
    std::cerr << "pg_stat_waits_report serve: " << s << std::endl;
}

int serve_http(const std::string &listen, const WebConfig &web, void *tls_ctx, std::vector<ServeTarget> targets) {
    g_web = web;
    g_tls_ctx = tls_ctx;
    g_targets = std::move(targets);

    // Signals are taken by sigwait below; civetweb's threads inherit the mask.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);

    CivetCallbacks callbacks;
    callbacks.begin_request = begin_request;
    callbacks.log_message = log_message;
    callbacks.http_error = http_error;
    if (web.tls) callbacks.external_ssl_ctx = external_ssl_ctx;
    std::vector<std::string> options = {
        "listening_ports", ports_option(listen, web.tls),
        "num_threads", std::to_string(kWorkers),
        "connection_queue", std::to_string(kConnectionQueue),
        "request_timeout_ms", std::to_string(kRequestTimeoutMs),
        "max_request_size", std::to_string(kMaxRequestBytes),
        "enable_keep_alive", "no",
    };
    std::unique_ptr<prometheus::Exposer> exposer;
    try {
        exposer = std::make_unique<prometheus::Exposer>(options, &callbacks);
    } catch (const std::exception &e) {
        std::cerr << "pg_stat_waits_report: cannot listen on " << listen << (web.tls ? " with TLS" : "") << ": "
                  << e.what() << "\n";
        return 1;
    }
    auto all = std::make_shared<AllTargets>();
    exposer->RegisterCollectable(all, "/metrics");
    std::string names;
    for (const auto &t : g_targets) names += (names.empty() ? "" : ", ") + t.name;
    std::string access = web.users.empty() ? "" : ", basic auth (" + std::to_string(web.users.size()) + " users)";
    if (web.client_auth == ClientAuth::RequireAndVerify) access += ", verified client certificates";
    if (!web.has_login()) access += ", /report/ for this host only";
    log_line("listening on " + listen + (web.tls ? " (TLS" : " (plain HTTP") + access +
             "; /metrics, /probe?target=NAME, /report/NAME); targets: " + names);

    int sig = 0;
    sigwait(&set, &sig);
    log_line(std::string("stopping on ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
    exposer.reset();
    g_targets.clear();
    return 0;
}

}  // namespace psw_report
