#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

namespace psw_report {

namespace {

struct KnownType {
    const char *name;
    const char *color;
};
// Bottom to top. Colours follow the ASH / Performance Insights habit.
const KnownType kKnownTypes[] = {
    {"CPU", "#2ca02c"},       {"IO", "#1f77b4"},        {"Lock", "#d62728"},       {"LWLock", "#ff7f0e"},
    {"BufferPin", "#8c564b"}, {"Buffer", "#8c564b"},    {"IPC", "#e377c2"},        {"Client", "#7f7f7f"},
    {"Remote", "#9edae5"},  // pg_stat_waits' own: a Citus node waiting for another server
    {"Timeout", "#bcbd22"},   {"Extension", "#17becf"}, {"Unreported", "#9467bd"}, {"Activity", "#c49c94"},
};
const char *kExtraColors[] = {"#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3"};

std::string fmt(const char *f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string num(double v) { return fmt("%.1f", v); }

std::string format_value(double v) {
    if (v == 0) return "0";
    // Whole numbers (tick values of counts, CPU counts) without decimals.
    if (std::fabs(v) >= 1 && std::fabs(v - std::round(v)) < 1e-9) return fmt("%.0f", v);
    if (std::fabs(v) >= 100) return fmt("%.0f", v);
    if (std::fabs(v) >= 10) return fmt("%.1f", v);
    if (std::fabs(v) >= 1) return fmt("%.2f", v);
    return fmt("%.3g", v);
}

std::string format_ms(double ms) {
    // Sub-millisecond bounds in µs or ns, so an axis reads 1µs, 8µs, 66µs
    // rather than 0.00102ms.
    if (ms == 0) return "0";
    if (ms < 0.001) return fmt("%.3gns", ms * 1e6);
    if (ms < 1) return fmt("%.3gµs", ms * 1000);
    if (ms < 1000) return fmt("%.0fms", ms);
    if (ms < 60000) return fmt("%.3gs", ms / 1000);
    return fmt("%.3gmin", ms / 60000);
}

// A bar narrowed by its cell (max-width) scales with it instead of
// spilling its segments past its edge.
std::string bar_viewbox(int width, int height) {
    return " viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) + "\" preserveAspectRatio=\"none\"";
}

std::string clock_label(double epoch, double utc_offset_s, bool seconds) {
    time_t t = static_cast<time_t>(std::floor(epoch + utc_offset_s));
    struct tm tm {};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, seconds ? "%H:%M:%S" : "%H:%M", &tm);
    return b;
}

}  // namespace

std::string html_escape(const std::string &s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                // Control characters would make the document invalid XML in SVG.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
                else out += c;
        }
    }
    return out;
}

std::string wait_type_color(const std::string &type) {
    for (const auto &k : kKnownTypes)
        if (type == k.name) return k.color;
    unsigned h = 0;
    for (unsigned char c : type) h = h * 31 + c;
    return kExtraColors[h % (sizeof kExtraColors / sizeof kExtraColors[0])];
}

int wait_type_rank(const std::string &type) {
    int i = 0;
    for (const auto &k : kKnownTypes) {
        if (type == k.name) return i;
        i++;
    }
    return i;
}

NiceScale nice_scale(double data_max, int target_ticks) {
    NiceScale s;
    if (!(data_max > 0) || !std::isfinite(data_max)) return s;
    if (target_ticks < 1) target_ticks = 1;
    double raw = data_max / target_ticks;
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        step = m * mag;
        if (step >= raw) break;
    }
    s.step = step;
    s.max = std::ceil(data_max / step - 1e-9) * step;
    if (s.max < data_max) s.max += step;
    return s;
}

std::string palette_color(size_t i) {
    static const char *kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                     "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

StackedGrid stack_timeline(const std::vector<TimelinePoint> &points, double bucket_s, double until,
                           const std::vector<std::string> &order) {
    StackedGrid g;
    g.bucket_s = bucket_s > 0 ? bucket_s : 60;
    if (points.empty()) return g;
    double first = points.front().bucket_start, last = first;
    for (const auto &p : points) {
        first = std::min(first, p.bucket_start);
        last = std::max(last, p.bucket_start);
    }
    if (until > last) last = std::max(last, first + std::floor((until - first) / g.bucket_s) * g.bucket_s);
    g.first_bucket = first;
    double span = (last - first) / g.bucket_s;
    g.buckets = static_cast<size_t>(std::min(100000.0, std::floor(span + 0.5))) + 1;

    std::map<std::pair<int, std::string>, std::vector<double>> by_type;
    for (const auto &p : points) {
        int rank = wait_type_rank(p.wait_event_type);
        if (!order.empty())
            rank = static_cast<int>(std::find(order.begin(), order.end(), p.wait_event_type) - order.begin());
        auto &v = by_type[{rank, p.wait_event_type}];
        v.resize(g.buckets, 0.0);
        double idx = std::floor((p.bucket_start - first) / g.bucket_s + 0.5);
        if (idx < 0 || idx >= static_cast<double>(g.buckets)) continue;
        v[static_cast<size_t>(idx)] += p.avg_active;
    }
    std::vector<double> base(g.buckets, 0.0);
    for (auto &kv : by_type) {
        StackedLayer layer;
        layer.wait_event_type = kv.first.second;
        layer.lower = base;
        for (size_t i = 0; i < g.buckets; i++) base[i] += kv.second[i];
        layer.upper = base;
        bool any = false;
        for (double v : kv.second) any = any || v > 0;
        if (any) g.layers.push_back(std::move(layer));
    }
    for (double v : base) g.max_total = std::max(g.max_total, v);
    return g;
}

std::string stacked_area_svg(const StackedGrid &g, const ChartOptions &opt) {
    const double left = 56, right = 150, top = 16, bottom = 40;
    const double pw = opt.width - left - right, ph = opt.height - top - bottom;
    NiceScale ys = nice_scale(std::max(g.max_total, opt.cpu_line), 5);
    auto color = [&](const std::string &layer) {
        auto it = opt.colors.find(layer);
        return it != opt.colors.end() ? it->second : wait_type_color(layer);
    };
    const double n = static_cast<double>(g.buckets ? g.buckets : 1);
    auto X = [&](double i) { return left + pw * i / n; };
    auto Y = [&](double v) { return top + ph * (1 - v / ys.max); };

    std::string s;
    s += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart timeline\" width=\"" + std::to_string(opt.width) +
         "\" height=\"" + std::to_string(opt.height) + "\" viewBox=\"0 0 " + std::to_string(opt.width) + " " +
         std::to_string(opt.height) + "\" role=\"img\" aria-label=\"average active sessions by wait event type\">\n";
    s += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(opt.width) + "\" height=\"" + std::to_string(opt.height) +
         "\" fill=\"#ffffff\"/>\n";
    // Horizontal grid and y labels.
    for (double v = 0; v <= ys.max + ys.step / 2; v += ys.step) {
        s += "<line class=\"grid\" x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(Y(v)) +
             "\" y2=\"" + num(Y(v)) + "\" stroke=\"#e0e0e0\"/>\n";
        s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(Y(v) + 4) + "\" text-anchor=\"end\" font-size=\"11\">" +
             format_value(v) + "</text>\n";
    }
    s += "<text x=\"14\" y=\"" + num(top + ph / 2) + "\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         num(top + ph / 2) + ")\">average active sessions</text>\n";
    // Areas: step-shaped so that one bucket is visible too.
    for (const auto &layer : g.layers) {
        std::string pts;
        for (size_t i = 0; i < g.buckets; i++) {
            pts += num(X(i)) + "," + num(Y(layer.upper[i])) + " ";
            pts += num(X(i + 1)) + "," + num(Y(layer.upper[i])) + " ";
        }
        for (size_t i = g.buckets; i-- > 0;) {
            pts += num(X(i + 1)) + "," + num(Y(layer.lower[i])) + " ";
            pts += num(X(i)) + "," + num(Y(layer.lower[i])) + " ";
        }
        double peak = 0;
        for (size_t i = 0; i < g.buckets; i++) peak = std::max(peak, layer.upper[i] - layer.lower[i]);
        s += "<polygon class=\"area\" data-type=\"" + html_escape(layer.wait_event_type) + "\" fill=\"" +
             color(layer.wait_event_type) + "\" stroke=\"none\" points=\"" + pts + "\"><title>" +
             html_escape(layer.wait_event_type) + " (peak " + format_value(peak) + ")</title></polygon>\n";
    }
    // The server's CPUs: load above this line with CPU on top means the
    // CPUs are saturated (sessions queue for a CPU).
    if (opt.cpu_line > 0) {
        s += "<line class=\"cpu-line\" x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" +
             num(Y(opt.cpu_line)) + "\" y2=\"" + num(Y(opt.cpu_line)) +
             "\" stroke=\"#111\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
        s += "<text class=\"cpu-label\" x=\"" + num(left + pw - 4) + "\" y=\"" + num(Y(opt.cpu_line) - 4) +
             "\" text-anchor=\"end\" font-size=\"11\">Max CPU (" + format_value(opt.cpu_line) + ")</text>\n";
    }
    // Axes and time labels.
    s += "<line class=\"axis\" x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(top + ph) +
         "\" y2=\"" + num(top + ph) + "\" stroke=\"#333\"/>\n";
    s += "<line class=\"axis\" x1=\"" + num(left) + "\" x2=\"" + num(left) + "\" y1=\"" + num(top) + "\" y2=\"" +
         num(top + ph) + "\" stroke=\"#333\"/>\n";
    if (g.buckets > 0) {
        const double span = g.bucket_s * n;
        static const double kTicks[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
                                        21600, 43200, 86400};
        double tick = kTicks[sizeof kTicks / sizeof kTicks[0] - 1];
        for (double t : kTicks)
            if (span / t <= 8) { tick = t; break; }
        double first_tick = std::ceil((g.first_bucket + opt.utc_offset_s) / tick) * tick - opt.utc_offset_s;
        for (double t = first_tick; t <= g.first_bucket + span + 1e-6; t += tick) {
            double x = left + pw * (t - g.first_bucket) / span;
            s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(top + ph) + "\" y2=\"" +
                 num(top + ph + 4) + "\" stroke=\"#333\"/>\n";
            s += "<text x=\"" + num(x) + "\" y=\"" + num(top + ph + 16) + "\" text-anchor=\"middle\" font-size=\"11\">" +
                 clock_label(t, opt.utc_offset_s, tick < 60) + "</text>\n";
        }
        s += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(top + ph + 32) +
             "\" text-anchor=\"middle\" font-size=\"11\">time (" + html_escape(opt.timezone_label) + "), bucket " +
             fmt("%g", g.bucket_s) + " s</text>\n";
    }
    // Legend, top of the stack first as in the chart.
    double ly = top + 4;
    for (size_t i = g.layers.size(); i-- > 0;) {
        const auto &t = g.layers[i].wait_event_type;
        s += "<rect class=\"legend\" x=\"" + num(left + pw + 14) + "\" y=\"" + num(ly) +
             "\" width=\"12\" height=\"12\" fill=\"" + color(t) + "\"/>\n";
        std::string label = t.size() > 17 ? t.substr(0, 16) + "…" : t;
        s += "<text x=\"" + num(left + pw + 32) + "\" y=\"" + num(ly + 10) + "\" font-size=\"12\">" +
             html_escape(label) + "<title>" + html_escape(t) + "</title></text>\n";
        ly += 18;
    }
    s += "</svg>\n";
    return s;
}

// Width budget of an axis label at font-size 10: generous for digits and
// "ms", so labels never touch.
static constexpr double kLabelCharPx = 6.0;
static constexpr double kLabelGapPx = 6.0;

std::string histogram_svg(const Histogram &h, int width, int height) {
    size_t lo = h.buckets.size(), hi = 0;
    int64_t maxc = 0;
    for (size_t i = 0; i < h.buckets.size(); i++) {
        if (h.buckets[i].count > 0) {
            lo = std::min(lo, i);
            hi = i;
            maxc = std::max(maxc, h.buckets[i].count);
        }
    }
    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart histogram\" width=\"" +
                    std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
                    std::to_string(width) + " " + std::to_string(height) + "\">\n";
    if (maxc == 0) {
        s += "<text x=\"10\" y=\"20\" font-size=\"12\">no waits recorded</text>\n</svg>\n";
        return s;
    }
    const double left = 48, right = 8, top = 8, bottom = 34;
    const double pw = width - left - right, ph = height - top - bottom;
    const size_t n = hi - lo + 1;
    NiceScale ys = nice_scale(static_cast<double>(maxc), 4);
    if (ys.step < 1) ys = {std::ceil(ys.max), 1};  // counts: whole ticks only
    const double bw = pw / n;
    for (double v = 0; v <= ys.max + ys.step / 2; v += ys.step) {
        double y = top + ph * (1 - v / ys.max);
        s += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
             "\" stroke=\"#e0e0e0\"/>\n<text x=\"" + num(left - 4) + "\" y=\"" + num(y + 4) +
             "\" text-anchor=\"end\" font-size=\"10\">" + format_value(v) + "</text>\n";
    }
    const std::string color = wait_type_color(h.wait_event_type);
    // Label every k-th bucket, k just large enough that the widest label
    // (about 6 px a character at font-size 10, plus a gap) fits its span.
    size_t widest = 0;
    for (size_t i = 0; i < n; i++) widest = std::max(widest, format_ms(h.buckets[lo + i].lower_ms).size());
    const double label_px = kLabelCharPx * static_cast<double>(widest) + kLabelGapPx;
    const size_t label_every = std::max<size_t>(1, static_cast<size_t>(std::ceil(label_px / bw)));
    for (size_t i = 0; i < n; i++) {
        const auto &b = h.buckets[lo + i];
        double bh = ph * static_cast<double>(b.count) / ys.max;
        double x = left + bw * i;
        s += "<rect class=\"bar\" x=\"" + num(x + 1) + "\" y=\"" + num(top + ph - bh) + "\" width=\"" +
             num(std::max(1.0, bw - 2)) + "\" height=\"" + num(bh) + "\" fill=\"" + color + "\"><title>" +
             format_ms(b.lower_ms) + " – " + format_ms(b.upper_ms) + ": " + std::to_string(b.count) +
             "</title></rect>\n";
        if (i % label_every == 0)
            s += "<text x=\"" + num(x + bw / 2) + "\" y=\"" + num(top + ph + 14) +
                 "\" text-anchor=\"middle\" font-size=\"10\">" + format_ms(b.lower_ms) + "</text>\n";
    }
    s += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(top + ph) + "\" y2=\"" +
         num(top + ph) + "\" stroke=\"#333\"/>\n";
    s += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(top + ph + 30) +
         "\" text-anchor=\"middle\" font-size=\"10\">wait duration (bucket lower bound)</text>\n</svg>\n";
    return s;
}

std::string event_bars_svg(const std::vector<TopEvent> &rows, const std::string &unit, int width) {
    const double label_w = 260, row_h = 20, bar_h = 14;
    const int height = static_cast<int>(row_h * static_cast<double>(rows.size()) + 6);
    int64_t maxv = 0;
    for (const auto &r : rows) maxv = std::max(maxv, r.samples);
    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart events\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                    std::to_string(height) + "\">\n";
    const double pw = width - label_w - 60;
    double y = 3;
    for (const auto &r : rows) {
        double w = maxv > 0 ? pw * static_cast<double>(r.samples) / static_cast<double>(maxv) : 0;
        s += "<text x=\"" + num(label_w - 6) + "\" y=\"" + num(y + 12) + "\" text-anchor=\"end\" font-size=\"12\">" +
             html_escape(r.wait_event_type + ":" + r.wait_event) + "</text>\n";
        s += "<rect class=\"bar\" data-type=\"" + html_escape(r.wait_event_type) + "\" x=\"" + num(label_w) +
             "\" y=\"" + num(y) + "\" width=\"" + num(std::max(1.0, w)) + "\" height=\"" + num(bar_h) + "\" fill=\"" +
             wait_type_color(r.wait_event_type) + "\"/>\n";
        s += "<text x=\"" + num(label_w + std::max(1.0, w) + 4) + "\" y=\"" + num(y + 12) + "\" font-size=\"12\">" +
             std::to_string(r.samples) + (unit.empty() ? "" : " " + html_escape(unit)) + "</text>\n";
        y += row_h;
    }
    return s + "</svg>\n";
}

std::string breakdown_bar_svg(const std::vector<QueryWait> &breakdown, double scale_total, int width, int height) {
    std::map<std::pair<int, std::string>, double> by_type;
    for (const auto &w : breakdown) by_type[{wait_type_rank(w.wait_event_type), w.wait_event_type}] += w.value;
    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bar breakdown\" width=\"" +
                    std::to_string(width) + "\" height=\"" + std::to_string(height) + "\"" +
                    bar_viewbox(width, height) + ">";
    double x = 0;
    if (scale_total > 0) {
        for (const auto &kv : by_type) {
            double w = width * kv.second / scale_total;
            s += "<rect x=\"" + num(x) + "\" y=\"0\" width=\"" + num(w) + "\" height=\"" + std::to_string(height) +
                 "\" fill=\"" + wait_type_color(kv.first.second) + "\"><title>" + html_escape(kv.first.second) +
                 ": " + format_value(kv.second) + "</title></rect>";
            x += w;
        }
    }
    s += "</svg>";
    return s;
}

std::string run_bar_svg(const std::vector<QueryWait> &parts, double scale_ms, int width, int height) {
    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bar run\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\"" + bar_viewbox(width, height) + ">";
    double x = 0;
    if (scale_ms > 0) {
        for (const auto &p : parts) {
            if (p.value <= 0) continue;
            double w = width * p.value / scale_ms;
            s += "<rect class=\"seg\" data-type=\"" + html_escape(p.wait_event_type) + "\" x=\"" + num(x) +
                 "\" y=\"0\" width=\"" + num(w) + "\" height=\"" + std::to_string(height) + "\" fill=\"" +
                 wait_type_color(p.wait_event_type) + "\"><title>" + html_escape(p.wait_event_type) + ":" +
                 html_escape(p.wait_event) + " " + format_value(p.value) + " ms</title></rect>";
            x += w;
        }
    }
    s += "</svg>";
    return s;
}

}  // namespace psw_report
