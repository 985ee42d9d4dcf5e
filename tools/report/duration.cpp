#include "duration.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace psw_report {

namespace {

// Seconds per unit, or 0 when the unit is unknown. PostgreSQL's spellings.
double unit_seconds(const std::string &u) {
    if (u.empty() || u == "s" || u == "sec" || u == "secs" || u == "second" || u == "seconds") return 1;
    if (u == "ms" || u == "msec" || u == "msecs" || u == "millisecond" || u == "milliseconds") return 0.001;
    if (u == "m" || u == "min" || u == "mins" || u == "minute" || u == "minutes") return 60;
    if (u == "h" || u == "hr" || u == "hrs" || u == "hour" || u == "hours") return 3600;
    if (u == "d" || u == "day" || u == "days") return 86400;
    if (u == "w" || u == "week" || u == "weeks") return 7 * 86400;
    return 0;
}

}  // namespace

std::optional<double> parse_duration(const std::string &text) {
    size_t i = 0;
    const size_t n = text.size();
    double total = 0;
    bool any = false;
    while (i < n) {
        while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) i++;
        if (i == n) break;
        size_t start = i;
        while (i < n && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) i++;
        if (start == i) return std::nullopt;
        std::string num = text.substr(start, i - start);
        char *end = nullptr;
        double v = std::strtod(num.c_str(), &end);
        if (end != num.c_str() + num.size() || !std::isfinite(v)) return std::nullopt;
        while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) i++;
        size_t ustart = i;
        while (i < n && std::isalpha(static_cast<unsigned char>(text[i]))) i++;
        std::string unit = text.substr(ustart, i - ustart);
        for (auto &c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        double mult = unit_seconds(unit);
        if (mult == 0) return std::nullopt;
        total += v * mult;
        any = true;
    }
    if (!any || !(total > 0) || total > 400.0 * 86400 * 365) return std::nullopt;
    return total;
}

std::string interval_literal(double seconds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f seconds", seconds);
    return buf;
}

std::string format_duration(double s) {
    char buf[64];
    if (s < 1) {
        std::snprintf(buf, sizeof buf, "%.0fms", s * 1000);
        return buf;
    }
    long long t = std::llround(s);
    long long d = t / 86400, h = t % 86400 / 3600, m = t % 3600 / 60, sec = t % 60;
    std::string out;
    auto add = [&](long long v, const char *u) {
        if (v == 0) return;
        if (!out.empty()) out += ' ';
        out += std::to_string(v) + u;
    };
    add(d, "d");
    add(h, "h");
    add(m, "min");
    add(sec, "s");
    return out.empty() ? "0s" : out;
}

double auto_bucket(double window_s, int points) {
    static const double kSteps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
                                    3600, 7200, 21600, 43200, 86400};
    double want = window_s / (points > 0 ? points : 60);
    for (double s : kSteps)
        if (s >= want) return s;
    return 86400;
}

}  // namespace psw_report
