#include "report_html.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "duration.h"
#include "html_parts.h"
#include "load_model.h"
#include "page_html.h"
#include "svg_chart.h"

namespace psw_report {

namespace {

std::string esc(const std::string &s) { return html_escape(s); }

// The four heaviest events of a row (largest first), each with its share of
// `total`, one per line.
std::string top_events(const std::vector<QueryWait> &parts, double total) {
    std::string events;
    size_t shown = 0;
    for (const auto &w : parts) {
        double share = total > 0 ? w.value / total * 100 : 0;
        if (share < 0.5 || shown++ == 4) break;  // parts are largest first: the rest would read 0%
        events += type_swatch(w.wait_event_type) + esc(w.wait_event_type) + ":" + esc(w.wait_event) + " " +
                  fmtd("%.0f%%", share) + "<br>";
    }
    return events;
}

std::string query_table(const std::vector<QueryRow> &rows, bool exact) {
    if (rows.empty()) return "<p class=\"empty\">no queries recorded yet</p>\n";
    double top_total = rows.front().total;
    for (const auto &r : rows) top_total = std::max(top_total, r.total);
    std::string s = "<table class=\"queries\"><tr><th>queryid</th><th>query</th><th>" +
                    std::string(exact ? "exact time (waits + CPU)" : "samples") +
                    "</th><th>breakdown by wait event type</th><th>top wait events</th></tr>\n";
    for (const auto &r : rows) {
        std::string events = top_events(r.breakdown, r.total);
        s += "<tr><td class=\"num\">" + esc(r.queryid) + "</td><td class=\"stmt\">" +
             statement_html(r.query_text, "(text unavailable: pg_stat_statements not installed in this database)") +
             "</td><td class=\"num\">" + (exact ? fmt_ms(r.total) : fmtd("%.0f", r.total)) + "</td><td>" +
             breakdown_bar_svg(r.breakdown, top_total) + "</td><td class=\"events\">" + events + "</td></tr>\n";
    }
    return s + "</table>\n";
}

// Each slow run: when, who, its text, elapsed and CPU, a bar split by wait
// event (all bars on one scale), its heaviest events and its lock blockers.
std::string slow_runs_table(const std::vector<SlowRun> &runs) {
    if (runs.empty())
        return "<p class=\"empty\">no slow runs recorded (exact timing on, runs of at least "
               "<code>pg_stat_waits.capture_min_duration</code>)</p>\n";
    double scale = 0;
    for (const auto &r : runs) scale = std::max(scale, r.elapsed_ms);
    std::string s = "<table class=\"runs\"><tr><th>started</th><th>pid</th><th>statement</th><th>elapsed</th>"
                    "<th>CPU</th><th>where the time went</th><th>blocked by</th></tr>\n";
    for (const auto &r : runs) {
        std::string events = top_events(r.parts, r.elapsed_ms);
        std::string blockers;
        for (const auto &b : r.blockers) blockers += "<span class=\"blocker\">" + esc(b) + "</span><br>";
        s += "<tr><td>" + esc(r.started) + "</td><td class=\"num\">" + std::to_string(r.pid) +
             "</td><td class=\"stmt\"><span class=\"qid\">" + (r.queryid.empty() ? "<i>hidden</i>" : esc(r.queryid)) +
             "</span><br>" + statement_html(r.query, "hidden") + "</td><td class=\"num\">" + fmt_ms(r.elapsed_ms) +
             "</td><td class=\"num\">" + fmt_ms(r.cpu_ms) + "</td><td class=\"bar\">" + run_bar_svg(r.parts, scale, 240) +
             "<div class=\"events\">" + events + "</div></td><td class=\"blockers\">" +
             (blockers.empty() ? std::string("<i>none seen</i>") : blockers) + "</td></tr>\n";
    }
    return s + "</table>\n";
}

const char *kCss = R"(
body{font:14px/1.4 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.meta{color:#555} table{border-collapse:collapse;margin:6px 0;max-width:100%}
th,td{border:1px solid #ddd;padding:3px 8px;vertical-align:top} td{overflow-wrap:anywhere}
th{background:#f4f4f4;text-align:left} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code{font-size:12px;overflow-wrap:anywhere} .na{color:#a05a00;font-style:italic} .error{color:#b00020}
.empty{color:#666;font-style:italic} svg{max-width:100%;height:auto}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
.pbar{display:inline-block;width:160px;max-width:100%;height:10px;background:#eee;vertical-align:middle}
.pbar span{display:block;height:10px;background:#4a78b5} .hist{display:inline-block;margin:0 18px 12px 0;max-width:100%}
.events{font-size:11px} .hint{color:#555;font-size:13px} td.stmt{min-width:160px} td.bar{min-width:110px}
.blockers{font-size:12px;color:#8b1a1a}
)";}  // namespace

std::string render_report_html(const ReportData &d) {
    std::string h;
    h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>pg_stat_waits report — " +
         esc(d.server) + "</title>\n" + (d.load && !d.load->page_path.empty() ? "<meta name=\"viewport\" content=\"width=device-width\">\n" : "") +
         "<style>" + kCss + kPageCss + "</style></head>\n<body>\n";
    h += "<h1>pg_stat_waits report</h1>\n<p class=\"meta\">server <b>" + esc(d.server) + "</b> (" +
         esc(d.server_version) + "), generated " + esc(d.generated_at) + ", window: " +
         esc(d.load ? d.load->window_label : "last " + format_duration(d.since_s)) + "</p>\n";
    h += render_load_sections(d);

    // 0. Sessions now (pg_stat_waits_activity).
    {
        std::string body = unavailable_html(d.sessions_av);
        if (body.empty()) {
            int active = 0;
            for (const auto &r : d.sessions_now) active += static_cast<int>(r.samples);
            body = "<p class=\"hint\">" + std::to_string(active) + " active of " + std::to_string(d.processes) +
                   " processes when the report was written (<code>pg_stat_waits_activity</code>; idle sessions and "
                   "background processes in their idle wait are left out).</p>\n";
            if (!d.sessions_now.empty()) body += event_bars_svg(d.sessions_now, "");
        }
        h += section_html("sessions", "Sessions now by wait event", body);
    }

    // 2. Top wait events (sampled, and exact when timing data exists).
    {
        std::string body = unavailable_html(d.top_av);
        if (body.empty()) {
            if (d.top.empty()) {
                body = "<p class=\"empty\">no samples in this window</p>\n";
            } else {
                body = "<table class=\"top\"><tr><th>wait event type</th><th>wait event</th><th>samples</th>"
                       "<th>%</th><th></th></tr>\n";
                for (const auto &t : d.top)
                    body += "<tr><td>" + type_swatch(t.wait_event_type) + esc(t.wait_event_type) + "</td><td>" +
                            esc(t.wait_event) + "</td><td class=\"num\">" + std::to_string(t.samples) +
                            "</td><td class=\"num\">" + (t.pct < 0.05 ? std::string("&lt;0.1") : fmtd("%.1f", t.pct)) + "</td><td>" + pct_bar(t.pct / 100) +
                            "</td></tr>\n";
                body += "</table>\n";
            }
        }
        h += section_html("top", "Top wait events (sampled, last " + format_duration(d.since_s) + ")", body);

        std::string ex = unavailable_html(d.exact_av);
        if (ex.empty()) {
            if (d.exact.empty()) {
                ex = std::string("<p class=\"empty\">no exact timing data") +
                     (d.timing_on ? "" : " (timing is off: <code>SET pg_stat_waits.timing = on</code>)") + "</p>\n";
            } else {
                double maxt = 0;
                for (const auto &e : d.exact) maxt = std::max(maxt, e.total_ms);
                ex = "<table class=\"exact\"><tr><th>wait event type</th><th>wait event</th><th>backend type</th>"
                     "<th>calls</th><th>total</th><th>mean</th><th>max</th><th></th></tr>\n";
                for (const auto &e : d.exact)
                    ex += "<tr><td>" + type_swatch(e.wait_event_type) + esc(e.wait_event_type) + "</td><td>" +
                          esc(e.wait_event) + "</td><td>" + esc(e.backend_type) + "</td><td class=\"num\">" +
                          std::to_string(e.calls) + "</td><td class=\"num\">" + fmt_ms(e.total_ms) +
                          "</td><td class=\"num\">" + fmt_ms(e.mean_ms) + "</td><td class=\"num\">" +
                          fmt_ms(e.max_ms) + "</td><td>" + pct_bar(maxt > 0 ? e.total_ms / maxt : 0) + "</td></tr>\n";
                ex += "</table>\n";
                if (d.exact_idle_ms > 0)
                    ex += "<p class=\"hint apart\">Left out: " + fmt_ms(d.exact_idle_ms) +
                          " of background processes sleeping in their idle main loop (<code>Activity</code> waits): "
                          "idle time, not work.</p>\n";
            }
        }
        h += section_html("exact", "Wait events timed exactly (since reset)", ex);
    }

    // 3. Top queries.
    {
        std::string body = unavailable_html(d.sampled_queries_av);
        if (body.empty())
            body = "<p class=\"hint\">sampled since " + esc(d.profile_since) +
                   " (<code>pg_stat_waits_profile</code>, which keeps no session state: a statement's "
                   "<code>Client:ClientRead</code> here includes the time its session then sat idle in "
                   "transaction; <a href=\"#topsql\">Top SQL by load</a> keeps that apart)</p>\n" +
                   query_table(d.sampled_queries, false);
        std::string ex = unavailable_html(d.exact_queries_av);
        if (ex.empty()) ex = query_table(d.exact_queries, true);
        h += section_html("queries", "Top queries and their waits",
                     "<h3>sampled</h3>\n" + body + "<h3>exact (<code>pg_stat_waits_queries</code>)</h3>\n" + ex);
    }

    // 3b. Slowest runs.
    {
        std::string body = unavailable_html(d.slow_runs_av);
        if (body.empty()) body = slow_runs_table(d.slow_runs);
        h += section_html("slowruns", "Slowest runs and where their time went", body);
    }

    // 4. Histograms.
    {
        std::string body = unavailable_html(d.histogram_av);
        if (body.empty()) {
            if (d.histograms.empty()) body = "<p class=\"empty\">no timed waits yet</p>\n";
            for (const auto &hg : d.histograms)
                body += "<div class=\"hist\"><div>" + type_swatch(hg.wait_event_type) + esc(hg.wait_event_type) +
                        ":" + esc(hg.wait_event) + "</div>\n" + histogram_svg(hg) + "</div>\n";
        }
        h += section_html("histograms", "Wait duration histograms (exact timing)", body);
    }

    // 5. Sampler status.
    {
        std::string body = unavailable_html(d.status_av);
        if (body.empty()) {
            body = "<table class=\"status\">\n";
            for (const auto &kv : d.status) {
                // Units where the raw value would need reading twice.
                std::string v = kv.second.empty() ? "<i>null</i>" : esc(kv.second);
                if (!kv.second.empty() && kv.first == "shmem_bytes") v = fmt_bytes(std::atof(kv.second.c_str()));
                if (!kv.second.empty() && kv.first == "sampler_lag_ms") v = fmt_ms(std::atof(kv.second.c_str()));
                body += "<tr><th>" + esc(kv.first) + "</th><td>" + v + "</td></tr>\n";
            }
            body += "</table>\n<p class=\"hint\">An empty view? <code>sampler_pid</code> NULL: the sampler is not "
                    "running; <code>sample_period_ms</code> 0: sampling is off; <code>history_used</code> 0: "
                    "nothing sampled yet (idle sessions are not sampled unless "
                    "<code>pg_stat_waits.sample_idle</code>); <code>timing</code> false: exact views stay empty.</p>\n";
        }
        h += section_html("status", "Sampler status", body);
    }
    h += "</body></html>\n";
    return h;
}

}  // namespace psw_report
