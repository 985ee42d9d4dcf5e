// pg_stat_waits_report's PostgreSQL-free parts: durations, command line,
// stacking and scaling of the timeline, SVG/HTML output, the top screen.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "cli.h"
#include "load_model.h"
#include "duration.h"
#include "report_html.h"
#include "svg_chart.h"
#include "top_screen.h"

using namespace psw_report;

namespace {

size_t count(const std::string &hay, const std::string &needle) {
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) n++;
    return n;
}

TEST(Duration, ParsesUnitsAndCombinations) {
    EXPECT_DOUBLE_EQ(*parse_duration("1h"), 3600);
    EXPECT_DOUBLE_EQ(*parse_duration("5min"), 300);
    EXPECT_DOUBLE_EQ(*parse_duration("5 minutes"), 300);
    EXPECT_DOUBLE_EQ(*parse_duration("90"), 90);
    EXPECT_DOUBLE_EQ(*parse_duration("30s"), 30);
    EXPECT_DOUBLE_EQ(*parse_duration("250ms"), 0.25);
    EXPECT_DOUBLE_EQ(*parse_duration("1h30min"), 5400);
    EXPECT_DOUBLE_EQ(*parse_duration("2d"), 172800);
    EXPECT_DOUBLE_EQ(*parse_duration("1.5h"), 5400);
}

TEST(Duration, RefusesGarbage) {
    for (const char *bad : {"", "h", "1x", "-5min", "0", "0s", "1h-", "abc", "1e9999", "5 parsecs", "1..2s"})
        EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
}

TEST(Duration, FormatsAndChoosesBuckets) {
    EXPECT_EQ(format_duration(3600), "1h");
    EXPECT_EQ(format_duration(5400), "1h 30min");
    EXPECT_EQ(format_duration(45), "45s");
    EXPECT_EQ(format_duration(0.25), "250ms");
    EXPECT_EQ(interval_literal(90), "90.000 seconds");
    EXPECT_DOUBLE_EQ(auto_bucket(3600), 60);   // 1 h -> 60 one-minute buckets
    EXPECT_DOUBLE_EQ(auto_bucket(60), 1);      // 1 min -> 1 s
    EXPECT_DOUBLE_EQ(auto_bucket(120), 2);
    EXPECT_DOUBLE_EQ(auto_bucket(86400), 1800);
    EXPECT_DOUBLE_EQ(auto_bucket(1e9), 86400);
}

TEST(Cli, ReportWithConnectionOptions) {
    ParseResult r = parse_args({"report", "--since", "1h", "--html", "out.html", "-h", "db1", "-p5433", "-U", "me",
                                "--dbname=prod", "--bucket=5min", "--top", "7"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.options.command, "report");
    EXPECT_DOUBLE_EQ(r.options.since_s, 3600);
    EXPECT_DOUBLE_EQ(r.options.bucket_s, 300);
    EXPECT_EQ(r.options.html_path, "out.html");
    EXPECT_EQ(r.options.host, "db1");
    EXPECT_EQ(r.options.port, "5433");
    EXPECT_EQ(r.options.user, "me");
    EXPECT_EQ(r.options.dbname, "prod");
    EXPECT_EQ(r.options.top_n, 7);
}

TEST(Cli, UsageErrors) {
    EXPECT_NE(parse_args({}).error, "");
    EXPECT_NE(parse_args({"report"}).error, "");  // no --html
    EXPECT_NE(parse_args({"report", "--html"}).error, "");
    EXPECT_NE(parse_args({"report", "--html", "x", "--since", "soon"}).error, "");
    EXPECT_NE(parse_args({"report", "--html", "x", "--since", "1min", "--bucket", "1h"}).error, "");
    EXPECT_NE(parse_args({"top", "-p", "99999"}).error, "");
    EXPECT_NE(parse_args({"top", "--frobnicate"}).error, "");
    EXPECT_NE(parse_args({"explode"}).error, "");
    EXPECT_NE(parse_args({"top", "--interval", "10ms"}).error, "");
    EXPECT_EQ(parse_args({"--help"}).error, "");
    EXPECT_TRUE(parse_args({"--help"}).options.help);
    ParseResult t = parse_args({"top", "--once"});
    EXPECT_EQ(t.error, "");
    EXPECT_TRUE(t.options.once);
    EXPECT_DOUBLE_EQ(t.options.interval_s, 1);
}

TEST(Svg, EscapesMarkup) {
    EXPECT_EQ(html_escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    EXPECT_EQ(html_escape(std::string("a\x01" "b")), "a b");
}

TEST(Svg, NiceScaleCoversTheData) {
    for (double v : {0.3, 1.0, 2.7, 9.06, 11.0, 99.0, 1234.5}) {
        NiceScale s = nice_scale(v, 5);
        EXPECT_GE(s.max, v);
        EXPECT_LT(s.max, v + 2 * s.step + 1e-9) << v;
        double ratio = s.step / std::pow(10.0, std::floor(std::log10(s.step)));
        EXPECT_TRUE(std::fabs(ratio - 1) < 1e-9 || std::fabs(ratio - 2) < 1e-9 || std::fabs(ratio - 2.5) < 1e-9 ||
                    std::fabs(ratio - 5) < 1e-9)
            << s.step;
    }
    EXPECT_DOUBLE_EQ(nice_scale(9.06).max, 10);
    EXPECT_DOUBLE_EQ(nice_scale(0).max, 1);  // empty chart still has an axis
}

TEST(Svg, StacksInFixedOrderAndFillsGaps) {
    // Lock listed first and CPU last: CPU must still be the bottom layer.
    std::vector<TimelinePoint> pts = {
        {1000, "Lock", 1.0}, {1000, "CPU", 2.0}, {1120, "CPU", 0.5}, {1120, "IO", 0.25},
    };
    StackedGrid g = stack_timeline(pts, 60, 1120);
    ASSERT_EQ(g.buckets, 3u);  // 1000, 1060 (empty), 1120
    ASSERT_EQ(g.layers.size(), 3u);
    EXPECT_EQ(g.layers[0].wait_event_type, "CPU");
    EXPECT_EQ(g.layers[1].wait_event_type, "IO");
    EXPECT_EQ(g.layers[2].wait_event_type, "Lock");
    EXPECT_DOUBLE_EQ(g.layers[0].upper[0], 2.0);
    EXPECT_DOUBLE_EQ(g.layers[2].lower[0], 2.0);
    EXPECT_DOUBLE_EQ(g.layers[2].upper[0], 3.0);
    EXPECT_DOUBLE_EQ(g.layers[2].upper[1], 0.0);  // the gap is zero, not interpolated
    EXPECT_DOUBLE_EQ(g.layers[1].upper[2], 0.75);
    EXPECT_DOUBLE_EQ(g.max_total, 3.0);
    // Extends to "now" with empty buckets.
    EXPECT_EQ(stack_timeline(pts, 60, 1300).buckets, 6u);
    EXPECT_TRUE(stack_timeline({}, 60, 1300).layers.empty());
}

TEST(Svg, AreaChartHasOnePolygonPerTypeWithinTheFrame) {
    std::vector<TimelinePoint> pts;
    for (int i = 0; i < 10; i++) {
        pts.push_back({1000.0 + 60 * i, "CPU", 1.0 + i % 3});
        pts.push_back({1000.0 + 60 * i, "IO", 0.5});
    }
    pts.push_back({1000, "We<ird>", 0.1});
    StackedGrid g = stack_timeline(pts, 60, 0);
    ChartOptions opt;
    std::string svg = stacked_area_svg(g, opt);
    EXPECT_EQ(count(svg, "<polygon class=\"area\""), 3u);
    EXPECT_NE(svg.find("data-type=\"CPU\" fill=\"" + wait_type_color("CPU") + "\""), std::string::npos);
    EXPECT_NE(svg.find("We&lt;ird&gt;"), std::string::npos);
    EXPECT_EQ(svg.find("We<ird>"), std::string::npos);
    // Every polygon coordinate lies inside the SVG.
    std::regex coord("([0-9.]+),([0-9.]+)");
    size_t checked = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), coord); it != std::sregex_iterator(); ++it) {
        double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
        EXPECT_GE(x, 0);
        EXPECT_LE(x, opt.width);
        EXPECT_GE(y, 0);
        EXPECT_LE(y, opt.height);
        checked++;
    }
    EXPECT_GT(checked, 40u);
    // Top of the stack (y of the max 3.6) touches, but does not leave, the plot.
    EXPECT_NE(svg.find(">4</text>"), std::string::npos);
}

TEST(Svg, HistogramTrimsEmptyBuckets) {
    Histogram h{"IO", "DataFileRead", {}};
    for (int i = 0; i < 20; i++)
        h.buckets.push_back({std::pow(2.0, i) / 1000, std::pow(2.0, i + 1) / 1000, int64_t{i >= 5 && i <= 7 ? 10 * i : 0}});
    std::string svg = histogram_svg(h);
    EXPECT_EQ(count(svg, "<rect class=\"bar\""), 3u);
    EXPECT_NE(histogram_svg(Histogram{"IO", "X", {}}).find("no waits recorded"), std::string::npos);
}

// Bucket labels along the x axis: with 30 populated buckets in 460 px, the
// labels shown must not overlap (each gets at least 6 px a character plus a
// gap), and the first bucket is labelled.
TEST(Svg, HistogramLabelsDoNotOverlap) {
    Histogram h{"IO", "DataFileRead", {}};
    for (int i = 0; i < 30; i++) h.buckets.push_back({std::pow(2.0, i) / 1000, std::pow(2.0, i + 1) / 1000, int64_t{5}});
    std::string svg = histogram_svg(h);
    std::vector<std::pair<double, size_t>> labels;  // centre x, characters
    const std::string mark = "text-anchor=\"middle\" font-size=\"10\">";
    for (size_t at = svg.find(mark); at != std::string::npos; at = svg.find(mark, at + 1)) {
        size_t xs = svg.rfind("x=\"", at) + 3;
        double x = std::stod(svg.substr(xs, svg.find('"', xs) - xs));
        size_t ts = at + mark.size();
        std::string text = svg.substr(ts, svg.find('<', ts) - ts);
        if (text.find("wait duration") != std::string::npos) continue;  // the axis title
        labels.push_back({x, text.size()});
    }
    ASSERT_GE(labels.size(), 3u);
    EXPECT_NE(svg.find(">1µs</text>"), std::string::npos);  // 0.001 ms, in a unit that reads
    for (size_t i = 1; i < labels.size(); i++) {
        double need = 3.0 * static_cast<double>(labels[i - 1].second + labels[i].second);  // half widths at 6 px/char
        EXPECT_GE(labels[i].first - labels[i - 1].first, need) << "labels " << i - 1 << " and " << i;
    }
}

TEST(Html, SectionsAndUnavailableObjects) {
    ReportData d;
    d.server = "db:5432/x<y>";
    d.status_av.available = true;
    d.status = {{"sampler_pid", "42"}, {"timing", "f"}};
    d.load = std::make_shared<LoadSections>();
    d.load->load_av.available = true;
    d.load->window = {940, 1080};
    d.load->chart.points = {{1000, "CPU", 1.5}, {1060, "Lock", 0.5}};
    d.load->chart.bucket_s = 60;
    d.now_epoch = 1080;
    d.sessions_av.available = true;
    d.sessions_now = {{"Lock", "transactionid", 3, 0}, {"CPU", "CPU", 1, 0}};
    d.processes = 9;
    d.top_av.missing_object = "pg_stat_waits_top";  // not available
    d.exact_av.missing_object = "pg_stat_waits";
    d.sampled_queries_av.available = true;
    d.sampled_queries = {{"123", "SELECT <1>", 10, {{"CPU", "CPU", 7}, {"IO", "DataFileRead", 3}}}};
    d.exact_queries_av.available = true;
    d.exact_queries_av.error = "boom";
    d.histogram_av.missing_object = "pg_stat_waits_histogram";
    d.slow_runs_av.missing_object = "pg_stat_waits_executions";
    std::string html = render_report_html(d);
    EXPECT_NE(html.find("4 active of 9 processes"), std::string::npos);
    EXPECT_EQ(count(html, "<rect class=\"bar\" data-type=\"Lock\""), 1u);
    for (const char *id : {"sessions", "load", "topsql", "blocking", "top", "exact", "queries", "slowruns",
                           "histograms", "status"})
        EXPECT_NE(html.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
    EXPECT_EQ(count(html, kNotAvailable), 6u);  // and top SQL and blocking: not marked available
    EXPECT_EQ(count(html, "<polygon class=\"area\""), 2u);
    EXPECT_NE(html.find("SELECT &lt;1&gt;"), std::string::npos);
    EXPECT_NE(html.find("could not read this section: boom"), std::string::npos);
    EXPECT_NE(html.find("x&lt;y&gt;"), std::string::npos);
    EXPECT_NE(html.find("CPU:CPU 70%"), std::string::npos);
    // Self-contained: nothing is loaded from elsewhere.
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
}

// Slowest runs: one bar per run split by wait event, on one scale; hidden
// text and ids said so; blockers named.
TEST(Html, SlowRunsBarsAndBlockers) {
    ReportData d;
    d.slow_runs_av.available = true;
    SlowRun a;
    a.started = "2026-11-30 14:02:00+00";
    a.pid = 4242;
    a.queryid = "-77";
    a.query = "UPDATE t SET v = 1 WHERE id < 2";
    a.elapsed_ms = 2500;
    a.cpu_ms = 10;
    a.parts = {{"Lock", "transactionid", 1990}, {"Timeout", "PgSleep", 500}, {"CPU", "CPU", 10}};
    a.blockers = {"pid 99 (idle in transaction, Client:ClientRead, queryid 5)"};
    SlowRun b;
    b.pid = 7;
    b.elapsed_ms = 1250;
    b.cpu_ms = 1250;
    b.parts = {{"CPU", "CPU", 1250}};
    d.slow_runs = {a, b};
    std::string html = render_report_html(d);
    size_t at = html.find("<section id=\"slowruns\">");
    ASSERT_NE(at, std::string::npos);
    std::string sec = html.substr(at, html.find("</section>", at) - at);
    EXPECT_EQ(count(sec, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bar run\""), 2u);
    EXPECT_EQ(count(sec, "<rect class=\"seg\""), 4u);
    // One scale: the 1250 ms run's CPU fills half of the 240 px.
    EXPECT_NE(sec.find("data-type=\"CPU\" x=\"0.0\" y=\"0\" width=\"120.0\""), std::string::npos);
    EXPECT_NE(sec.find("Lock:transactionid 80%"), std::string::npos);
    EXPECT_NE(sec.find("pid 99 (idle in transaction, Client:ClientRead, queryid 5)"), std::string::npos);
    EXPECT_NE(sec.find("UPDATE t SET v = 1 WHERE id &lt; 2"), std::string::npos);
    EXPECT_EQ(count(sec, "<i>hidden</i>"), 2u);  // b's queryid and text
    EXPECT_EQ(count(sec, "<i>none seen</i>"), 1u);
    d.slow_runs.clear();
    html = render_report_html(d);
    EXPECT_NE(html.find("no slow runs recorded"), std::string::npos);
}

TEST(Html, EmptyTimelineExplainsWhy) {
    ReportData d;
    d.load = std::make_shared<LoadSections>();
    d.load->load_av.available = true;
    std::string html = render_report_html(d);
    EXPECT_NE(html.find("no active sessions were sampled"), std::string::npos);
    EXPECT_EQ(html.find("<polygon"), std::string::npos);
}

TEST(Top, BlockBarsUseEighths) {
    EXPECT_EQ(block_bar(0, 20), "");
    EXPECT_EQ(block_bar(1, 4), "████");
    EXPECT_EQ(block_bar(0.5, 4), "██");
    EXPECT_EQ(block_bar(1.0 / 32, 4), "▏");   // one eighth of one cell
    EXPECT_EQ(block_bar(0.25 + 3.0 / 32, 4), "█▍");  // 1 3/8 cells
    EXPECT_EQ(block_bar(7, 4), "████");       // never wider than asked
    EXPECT_EQ(display_width(block_bar(0.999, 20)), 20u);
}

TEST(Top, ScreenFitsTheTerminal) {
    TopSnapshot s;
    s.server = "h:1/d";
    s.clock = "12:00:00";
    s.status_line = "sampler pid 7";
    s.total_processes = 50;
    s.top_av.available = true;
    s.last_minute = {{"Lock", "transactionid", 60, 60.0}, {"CPU", "CPU", 40, 40.0}};
    for (int i = 0; i < 40; i++) {
        Session x;
        x.pid = 1000 + i;
        x.backend_type = "client backend";
        x.state = "active";
        x.wait_event_type = i % 2 ? "Lock" : "CPU";
        x.wait_event = i % 2 ? "transactionid" : "CPU";
        x.query = "UPDATE t SET v = v + 1\nWHERE id = 1 -- é";
        if (i % 2) x.blockers = {1000 + i - 1};
        s.sessions.push_back(x);
    }
    auto lines = render_top_screen(s, 80, 24);
    EXPECT_EQ(lines.size(), 24u);
    for (const auto &l : lines) {
        EXPECT_LE(display_width(l), 80u);
        EXPECT_EQ(l.find('\n'), std::string::npos);
    }
    EXPECT_NE(lines[2].find("40 active of 50"), std::string::npos);
    EXPECT_NE(lines[2].find("Lock 20"), std::string::npos);
    EXPECT_NE(lines.back().find("more"), std::string::npos);
    EXPECT_NE(lines[5].find("transactionid"), std::string::npos);
    EXPECT_NE(lines[5].find("60.0%"), std::string::npos);
    // A blocked session names its blocker within 80 columns.
    bool blocked_shown = false;
    for (const auto &l : lines) blocked_shown = blocked_shown || l.find("←1000") != std::string::npos;
    EXPECT_TRUE(blocked_shown);

    s.top_av = Availability{};
    s.top_av.missing_object = "pg_stat_waits_top";
    auto plain = render_top_screen(s, 200, 0);
    EXPECT_EQ(plain.size(), 8u + 40u);  // unbounded height: every session
    bool na = false;
    for (const auto &l : plain) na = na || l.find(kNotAvailable) != std::string::npos;
    EXPECT_TRUE(na);
}

TEST(Top, BlockerPids) {
    EXPECT_EQ(parse_pid_list(""), std::vector<int>{});
    EXPECT_EQ(parse_pid_list("12"), std::vector<int>{12});
    EXPECT_EQ(parse_pid_list("12,345"), (std::vector<int>{12, 345}));
    EXPECT_EQ(parse_pid_list("12,x,7,"), (std::vector<int>{12, 7}));
    EXPECT_EQ(blockers_cell({}), "");
    EXPECT_EQ(blockers_cell({12, 345}), "←12,345");
}

}  // namespace

namespace {

// A state longer than its column is shortened, never run into the next
// column; a statement that started after the reading one is 0.0s, not -0.0s.
TEST(Top, ColumnsStaySeparate) {
    TopSnapshot s;
    s.top_av.available = true;
    Session x;
    x.pid = 7;
    x.backend_type = "client backend";
    x.state = "idle in transaction";
    x.wait_event_type = "Client";
    x.wait_event = "ClientRead";
    x.running_s = -0.02;
    x.queryid = "-2837127208457219642";
    s.sessions = {x};
    x.state = "fastpath function call";
    s.sessions.push_back(x);
    auto lines = render_top_screen(s, 160, 0);
    std::string row = lines[lines.size() - 2], row2 = lines.back();
    EXPECT_NE(row.find("idle in tx "), std::string::npos) << row;
    EXPECT_NE(row.find(" Client:ClientRead"), std::string::npos) << row;
    EXPECT_NE(row.find(" 0.0s "), std::string::npos) << row;
    EXPECT_EQ(row.find("-0.0s"), std::string::npos) << row;
    EXPECT_NE(row.find(" -2837127208457219642 "), std::string::npos) << row;
    EXPECT_NE(row2.find("fastpath funct… Client:ClientRead"), std::string::npos) << row2;
}

}  // namespace
