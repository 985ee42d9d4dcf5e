#include "live_page.h"

#include <cctype>
#include <map>

#include "duration.h"
#include "html_parts.h"
#include "load_model.h"
#include "pg_data.h"
#include "report_html.h"
#include "serve_http.h"
#include "svg_chart.h"

namespace psw_report {

namespace {

std::string url_decode(const std::string &s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
                   std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
            out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::map<std::string, std::string> parse_query(const std::string &q) {
    std::map<std::string, std::string> out;
    size_t from = 0;
    while (from <= q.size()) {
        size_t amp = q.find('&', from);
        std::string kv = q.substr(from, amp == std::string::npos ? std::string::npos : amp - from);
        size_t eq = kv.find('=');
        if (!kv.empty()) out[url_decode(kv.substr(0, eq))] = eq == std::string::npos ? "" : url_decode(kv.substr(eq + 1));
        if (amp == std::string::npos) break;
        from = amp + 1;
    }
    return out;
}

PageReply error_page(int status, const std::string &msg) {
    PageReply r;
    r.status = status;
    r.body = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pg_stat_waits report</title>"
             "</head><body><h1>pg_stat_waits report</h1><p class=\"error\">" + html_escape(msg) + "</p></body></html>\n";
    return r;
}

bool valid_queryid(const std::string &s) {
    if (s.empty() || s.size() > 20) return false;
    for (size_t i = 0; i < s.size(); i++)
        if (!std::isdigit(static_cast<unsigned char>(s[i])) && !(i == 0 && s[i] == '-')) return false;
    return true;
}

}  // namespace

PageReply live_report_page(const std::string &path, const std::string &query, const std::string &conninfo, int top_n) {
    std::map<std::string, std::string> p = parse_query(query);
    Options o;
    o.command = "report";
    o.dbname = conninfo;
    o.top_n = top_n;
    std::string window = p.count("window") && !p["window"].empty() ? p["window"] : "5min";
    o.from = p["from"];
    o.to = o.from.empty() ? "" : p["to"];
    auto since = parse_duration(window);
    if (!since) return error_page(400, "invalid window \"" + window + "\" (examples: 5min, 1h, 1d)");
    o.since_s = *since;
    o.slice = p.count("slice") && !p["slice"].empty() ? p["slice"] : "class";
    if (!parse_slice(o.slice)) return error_page(400, "invalid slice \"" + o.slice + "\"");
    o.compare = p["compare"];
    o.queryid = p["queryid"];
    if (!o.queryid.empty() && !valid_queryid(o.queryid)) return error_page(400, "invalid queryid");
    try {
        Server server(o);
        ReportData d = server.read_report(o);
        if (d.load) {
            d.load->page_path = path;
            d.load->window_param = window;
            d.load->from_param = o.from;
            d.load->to_param = o.to;
            d.load->compare_param = o.compare;
        }
        PageReply r;
        r.body = render_report_html(d);
        // A window that ends now is refreshed; a fixed one does not change.
        if (o.from.empty()) r.body.replace(r.body.find("<head>"), 6, "<head><meta http-equiv=\"refresh\" content=\"60\">");
        return r;
    } catch (const InputError &e) {
        return error_page(400, e.summary);
    } catch (const FatalError &e) {
        // The target is unreachable or not usable: the page says so, the
        // log says why (libpq's and PostgreSQL's text stay there).
        serve_log("report page " + path + ": " + e.what());
        return error_page(503, e.summary + " (the exporter's log says why)");
    } catch (const std::exception &e) {
        serve_log("report page " + path + ": " + e.what());
        return error_page(500, "internal error (the exporter's log says what)");
    }
}

}  // namespace psw_report
