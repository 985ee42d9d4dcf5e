// The report's first screen: window picker (live page only), database load
// with the CPU line, top SQL by load, top blocking sessions, and the window
// compared with a baseline.
#include "page_html.h"

#include <algorithm>
#include <cmath>

#include "duration.h"
#include "html_parts.h"
#include "load_model.h"
#include "svg_chart.h"

namespace psw_report {

namespace {

std::string esc(const std::string &s) { return html_escape(s); }

std::string aas(double v) { return v >= 10 ? fmtd("%.1f", v) : fmtd("%.2f", v); }

// The live page's URL with the current parameters, some replaced.
std::string page_url(const LoadSections &ls, Slice slice, const std::string &window, const std::string &compare,
                     const std::string &queryid = "") {
    std::string u = ls.page_path + "?";
    if (!ls.from_param.empty() && window.empty()) {
        u += "from=" + url_encode(ls.from_param);
        if (!ls.to_param.empty()) u += "&to=" + url_encode(ls.to_param);
    } else {
        u += "window=" + url_encode(window.empty() ? ls.window_param : window);
    }
    u += std::string("&slice=") + slice_param(slice);
    if (!compare.empty()) u += "&compare=" + url_encode(compare);
    if (!queryid.empty()) u += "&queryid=" + url_encode(queryid);
    return u;
}

std::string window_picker(const LoadSections &ls) {
    const Slice slice = ls.chart.slice;
    std::string s = "<nav class=\"picker\"><span class=\"lbl\">window</span>";
    for (const char *w : {"5min", "1h", "1d"}) {
        bool on = ls.from_param.empty() && ls.window_param == w;
        s += std::string("<a class=\"window") + (on ? " on" : "") + "\" href=\"" +
             esc(page_url(ls, slice, w, ls.compare_param)) + "\">last " + w + "</a>";
    }
    s += "<form method=\"get\" action=\"" + esc(ls.page_path) + "\"><input type=\"hidden\" name=\"slice\" value=\"" +
         slice_param(slice) + "\"><label>from <input name=\"from\" size=\"19\" placeholder=\"2024-05-01 10:00\" value=\"" +
         esc(ls.from_param) + "\"></label> <label>to <input name=\"to\" size=\"19\" placeholder=\"now\" value=\"" +
         esc(ls.to_param) + "\"></label> <button type=\"submit\">show</button></form></nav>\n";
    s += "<nav class=\"picker\"><span class=\"lbl\">slice load by</span>";
    for (Slice sl : all_slices())
        s += std::string("<a class=\"slice") + (sl == slice ? " on" : "") + "\" data-slice=\"" + slice_param(sl) +
             "\" href=\"" + esc(page_url(ls, sl, "", ls.compare_param)) + "\">" + slice_title(sl) + "</a>";
    s += "</nav>\n<nav class=\"picker\"><span class=\"lbl\">compare with</span>";
    const std::pair<const char *, const char *> cmp[] = {{"", "nothing"}, {"prev", "the window before"},
                                                         {"1d", "the same window yesterday"}};
    for (const auto &c : cmp)
        s += std::string("<a class=\"compare") + (ls.compare_param == c.first ? " on" : "") + "\" href=\"" +
             esc(page_url(ls, slice, "", c.first)) + "\">" + c.second + "</a>";
    return s + "</nav>\n";
}

std::string load_section(const ReportData &d, const LoadSections &ls) {
    std::string body = unavailable_html(ls.load_av);
    if (!body.empty()) return section_html("load", "Database load", body);
    const LoadChart &ch = ls.chart;
    if (!ls.note.empty()) body += "<p class=\"hint\">" + esc(ls.note) + "</p>\n";
    if (!ch.sliced_as_asked) body += "<p class=\"hint\">shown by wait class: this window cannot be sliced otherwise</p>\n";
    StackedGrid g = stack_timeline(ch.points, ch.bucket_s, std::min(ls.window.to, d.now_epoch),
                                   ch.slice == Slice::WaitClass ? std::vector<std::string>() : ch.keys);
    ChartOptions opt;
    opt.utc_offset_s = d.utc_offset_s;
    opt.timezone_label = d.timezone;
    opt.cpu_line = ch.cpu_count;
    if (ch.slice != Slice::WaitClass)
        for (size_t i = 0; i < ch.keys.size(); i++) opt.colors[ch.keys[i]] = palette_color(i);
    if (g.layers.empty())
        body += "<p class=\"empty\">no active sessions were sampled in this window</p>\n";
    else
        body += stacked_area_svg(g, opt);
    body += "<p class=\"hint\">Average active sessions (AAS) by " + std::string(slice_title(ch.slice)) +
            ": sessions running (CPU) or waiting inside a statement, averaged over each " +
            format_duration(ch.bucket_s) +
            " bucket — over the part of it the window covers, so the bucket still filling is not diluted. "
            "Average over the window <b class=\"avg-load\">" + aas(ch.avg_load) + "</b>. ";
    if (ch.cpu_count > 0)
        body += "The dashed line is the server's <b class=\"cpu-count\">" + fmtd("%.0f", ch.cpu_count) +
                "</b> CPUs (<code>pg_stat_waits_status.cpu_count</code>): load above it with CPU on top means "
                "sessions queue for a CPU.";
    else
        body += "No CPU line: this server's pg_stat_waits does not report <code>cpu_count</code> (1.2).";
    if (!ch.points.empty()) {
        double last = ch.points.front().bucket_start, total = 0;
        for (const auto &p : ch.points) last = std::max(last, p.bucket_start);
        for (const auto &p : ch.points)
            if (p.bucket_start == last) total += p.avg_active;
        double covered = std::min({last + ch.bucket_s, ls.window.to, d.now_epoch}) - last;
        body += " The last bucket (" + clock_text(last, d.utc_offset_s) + ", " + format_duration(covered) + " of " +
                format_duration(ch.bucket_s) + " covered) averages <b class=\"last-bucket\">" + aas(total) +
                "</b> sessions.";
    }
    body += "</p>\n<p class=\"hint apart\">Not load, shown apart: sessions <b>idle in transaction</b> (the client "
            "holds a transaction open between statements) <b class=\"idle-tx\">" + aas(ch.idle_in_transaction) +
            "</b> on average; background processes sleeping (<code>Activity</code> waits, and their "
            "<code>Timeout</code> waits such as the checkpointer's write delay) " + aas(ch.idle_background) + ".</p>\n";
    if (ch.slice == Slice::Sql && !ch.keys.empty()) {
        body += "<ul class=\"legend-sql\">";
        for (size_t i = 0; i < ch.keys.size(); i++) {
            auto it = ls.texts.find(ch.keys[i]);
            body += "<li><span class=\"sw\" style=\"background:" + palette_color(i) + "\"></span>" + esc(ch.keys[i]) +
                    " " + statement_html(it == ls.texts.end() ? "" : it->second, "") + "</li>";
        }
        body += "</ul>\n";
    }
    return section_html("load", "Database load — " + ls.window_label, body);
}

std::string top_sql_section(const ReportData &d, const LoadSections &ls) {
    std::string body = unavailable_html(ls.top_sql_av);
    if (body.empty() && ls.top_sql.empty())
        body = "<p class=\"empty\">no statement was sampled in this window</p>\n" +
               (ls.top_sql_note.empty() ? "" : "<p class=\"hint\">" + esc(ls.top_sql_note) + "</p>\n");
    if (!body.empty()) return section_html("topsql", "Top SQL by load", body);
    double scale = 0;
    for (const auto &q : ls.top_sql) scale = std::max(scale, q.load + q.idle_in_transaction);
    body = "<p class=\"hint\">Ranked by load in the window (average active sessions, sampled). The bar splits each "
           "statement's load by wait class; <i>idle in tx</i> is the time its session then sat idle in transaction "
           "(the client's turn, not the statement's), kept out of the load so that the sampled shares and the exact "
           "ones agree. <i>exact</i> is pg_stat_waits' measured time of the statement since " +
           esc(ls.exact_since.empty() ? std::string("the last reset") : ls.exact_since) +
           ": its waits <b>plus CPU</b>" + (d.timing_on ? "" : " (timing is off on this server)") + ".</p>\n";
    if (!ls.top_sql_note.empty()) body += "<p class=\"hint\">" + esc(ls.top_sql_note) + "</p>\n";
    body += "<table class=\"topsql\"><tr><th>statement</th><th>load (AAS)</th><th>load by waits</th>"
            "<th>idle in tx</th><th>CPU sampled / exact</th><th>exact (waits + CPU)</th><th>calls</th>"
            "<th>mean</th></tr>\n";
    for (const auto &q : ls.top_sql) {
        std::string runs;
        if (q.slow_runs > 0)
            runs = ls.page_path.empty()
                       ? " · " + std::to_string(q.slow_runs) + " slow runs"
                       : " · <a class=\"runs\" href=\"" +
                             esc(page_url(ls, ls.chart.slice, "", ls.compare_param, q.queryid)) + "#slowruns\">" +
                             std::to_string(q.slow_runs) + " slow runs</a>";
        double cpu_s = type_share(q.waits, "CPU");
        std::string cpu = fmtd("%.0f%%", cpu_s);
        std::string attrs = " data-queryid=\"" + esc(q.queryid) + "\" data-samples=\"" + std::to_string(q.samples) +
                            "\" data-load=\"" + fmtd("%.4f", q.load) +
                            "\" data-cpu-sampled=\"" + fmtd("%.1f", cpu_s) + "\"";
        if (q.exact_ms) {
            double cpu_e = type_share(q.exact, "CPU");
            cpu += " / " + fmtd("%.0f%%", cpu_e);
            attrs += " data-cpu-exact=\"" + fmtd("%.1f", cpu_e) + "\"";
        }
        std::string waits;
        for (size_t i = 0; i < q.waits.size() && i < 2; i++)
            waits += (i ? ", " : "") + type_swatch(q.waits[i].wait_event_type) + esc(q.waits[i].wait_event_type) +
                     ":" + esc(q.waits[i].wait_event) + " " + fmtd("%.0f%%", q.load > 0 ? q.waits[i].value / q.load * 100 : 0);
        body += "<tr class=\"topsql\"" + attrs + "><td class=\"stmt\"><span class=\"qid\">" + esc(q.queryid) + runs +
                "</span><br>" + statement_html(q.text, "(text unavailable: not in pg_stat_statements, or it is not installed here)") +
                "</td><td class=\"num\">" + aas(q.load) + "</td><td class=\"bar\">" + breakdown_bar_svg(q.waits, scale, 200) +
                "<div class=\"events\">" + waits + "</div></td><td class=\"num\">" + aas(q.idle_in_transaction) +
                "</td><td class=\"num\">" + cpu + "</td><td class=\"num\">" +
                (q.exact_ms ? fmt_ms(*q.exact_ms) : std::string("–")) + "</td><td class=\"num\">" +
                (q.calls ? std::to_string(*q.calls) : std::string("–")) + "</td><td class=\"num\">" +
                (q.mean_ms ? fmt_ms(*q.mean_ms) : std::string("–")) + "</td></tr>\n";
    }
    return section_html("topsql", "Top SQL by load", body + "</table>\n");
}

std::string blocking_section(const ReportData &d, const LoadSections &ls) {
    std::string body = unavailable_html(ls.blocking_av);
    if (body.empty() && ls.blocking.empty())
        body = "<p class=\"empty\">no session was seen blocking another in this window</p>\n";
    if (!body.empty()) return section_html("blocking", "Top blocking sessions", body);
    body = "<p class=\"hint\">From the lock blockers the sampler recorded for sessions in a <code>Lock</code> wait: "
           "<i>blocked</i> is the session-time others spent waiting on this one.</p>\n"
           "<table class=\"blocking\"><tr><th>blocker pid</th><th>its state, last seen</th><th>its statement</th>"
           "<th>blocked</th><th>sessions</th><th>seen</th><th>statements it blocked</th></tr>\n";
    auto text_of = [&](const std::string &id) {
        auto it = ls.texts.find(id);
        return it == ls.texts.end() ? std::string() : it->second;
    };
    for (const auto &b : ls.blocking) {
        std::string blocked;
        for (const auto &id : b.blocked_queryids)
            blocked += "<div>" + statement_html(text_of(id), "queryid " + id) + "</div>";
        body += "<tr class=\"blocker\" data-pid=\"" + std::to_string(b.pid) + "\"><td class=\"num\">" +
                std::to_string(b.pid) + "</td><td class=\"state\">" + esc(b.state) + (b.wait.size() > 1 ? "<br>" + esc(b.wait) : "") +
                "</td><td>" +
                (b.queryid.empty() ? std::string("<i>none or hidden</i>")
                                   : statement_html(text_of(b.queryid), "queryid " + b.queryid)) +
                "</td><td class=\"num\">" + fmt_ms(b.blocked_s * 1000) + "</td><td class=\"num\">" +
                std::to_string(b.waiters) + "</td><td>" + clock_text(b.first, d.utc_offset_s) + " – " +
                clock_text(b.last, d.utc_offset_s) + "</td><td>" + blocked + "</td></tr>\n";
    }
    return section_html("blocking", "Top blocking sessions", body + "</table>\n");
}

std::string compare_table(const std::vector<CompareRow> &rows, const char *what, const LoadSections &ls) {
    if (rows.empty()) return "<p class=\"empty\">nothing sampled in either window</p>\n";
    std::string s = std::string("<table class=\"compare\"><tr><th>") + what +
                    "</th><th>this window (AAS)</th><th>baseline (AAS)</th><th>change</th></tr>\n";
    for (const auto &r : rows) {
        std::string key = r.wait_event_type.empty()
                              ? esc(r.key) + "<br>" + statement_html(ls.texts.count(r.key) ? ls.texts.at(r.key) : "", "")
                              : type_swatch(r.wait_event_type) + esc(r.key);
        s += "<tr class=\"delta\" data-key=\"" + esc(r.key) + "\" data-delta=\"" + fmtd("%.4f", r.delta()) +
             "\"><td>" + key + "</td><td class=\"num\">" + aas(r.current) + "</td><td class=\"num\">" +
             aas(r.baseline) + "</td><td class=\"num " + (r.delta() > 0 ? "up" : "down") + "\">" +
             (r.delta() > 0 ? "+" : "") + aas(r.delta()) + "</td></tr>\n";
    }
    return s + "</table>\n";
}

std::string compare_section(const LoadSections &ls) {
    std::string body = unavailable_html(ls.compare_av);
    if (body.empty()) {
        body = "<p class=\"hint\">This window (" + esc(ls.window_label) + ") against " + esc(ls.baseline_label) +
               ", in average active sessions; the largest change first.</p>\n<div class=\"sidebyside\"><div>"
               "<h3>by wait event</h3>\n" + compare_table(ls.compare_waits, "wait event", ls) + "</div><div><h3>by statement</h3>\n" +
               (ls.compare_sql_available ? compare_table(ls.compare_sql, "statement", ls)
                                         : "<p class=\"na\">a window older than the raw sample history has no "
                                           "statements (minute buckets keep wait events only)</p>\n") +
               "</div></div>\n";
    }
    return section_html("compare", "Compared with " + ls.baseline_label, body);
}

}  // namespace

const char *const kPageCss = R"(
.picker{margin:6px 0;display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.picker .lbl{color:#555;min-width:110px} .picker a{padding:2px 8px;border:1px solid #ccc;border-radius:3px;
text-decoration:none;color:#234} .picker a.on{background:#234;color:#fff} .picker form{display:inline}
.apart{color:#555} details.sql summary{cursor:pointer} .cut{color:#777;font-size:12px}
pre.sql{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;margin:4px 0;background:#f7f7f7;padding:4px}
.qid{color:#555;font-size:12px} td.up{color:#b00020} td.down{color:#1a7f37}
.sidebyside{display:flex;flex-wrap:wrap;gap:24px} .sidebyside>div{flex:1 1 360px;min-width:0}
ul.legend-sql{list-style:none;padding:0;font-size:12px} td.state{min-width:8.5em}
)";

std::string render_load_sections(const ReportData &d) {
    if (!d.load) return "";
    const LoadSections &ls = *d.load;
    std::string h;
    if (!ls.page_path.empty()) h += window_picker(ls);
    h += load_section(d, ls);
    h += top_sql_section(d, ls);
    h += blocking_section(d, ls);
    if (ls.compared) h += compare_section(ls);
    return h;
}

}  // namespace psw_report
