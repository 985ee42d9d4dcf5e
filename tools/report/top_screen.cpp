#include "top_screen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "report_html.h"

namespace psw_report {

size_t display_width(const std::string &s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) n++;
    return n;
}

std::string fit_width(const std::string &s, size_t cols) {
    size_t n = 0, i = 0;
    for (; i < s.size(); i++) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) != 0x80) {
            if (n == cols) break;
            n++;
        }
    }
    return s.substr(0, i);
}

std::string block_bar(double fraction, int width) {
    static const char *kPartial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    if (!(fraction > 0) || width <= 0) return "";
    fraction = std::min(1.0, fraction);
    long eighths = std::lround(fraction * width * 8);
    std::string out;
    for (long i = 0; i < eighths / 8; i++) out += "█";
    out += kPartial[eighths % 8];
    return out;
}

std::vector<int> parse_pid_list(const std::string &s) {
    std::vector<int> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(',', start);
        if (end == std::string::npos) end = s.size();
        std::string token = s.substr(start, end - start);
        bool digits = !token.empty() && token.size() <= 9 &&
                      token.find_first_not_of("0123456789") == std::string::npos;
        if (digits) out.push_back(std::stoi(token));
        start = end + 1;
    }
    return out;
}

std::string blockers_cell(const std::vector<int> &pids) {
    if (pids.empty()) return "";
    std::string out = "←";
    for (size_t i = 0; i < pids.size(); i++) out += (i ? "," : "") + std::to_string(pids[i]);
    return out;
}

namespace {

// A column of w characters that always ends in a space, so that a long
// value never runs into the next column; a cut value ends in "…".
std::string pad(const std::string &s, size_t w) {
    std::string t = s;
    if (display_width(t) > w - 1) t = fit_width(t, w - 2) + "…";
    return t + std::string(w - display_width(t), ' ');
}

// pg_stat_activity's states, short enough for the STATE column.
std::string short_state(const std::string &state) {
    if (state == "idle in transaction") return "idle in tx";
    if (state == "idle in transaction (aborted)") return "idle in tx (ab)";
    return state;
}

std::string fmt(const char *f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string one_line(std::string q) {
    for (auto &c : q)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return q;
}

}  // namespace

std::vector<std::string> render_top_screen(const TopSnapshot &s, int width, int height) {
    const size_t w = static_cast<size_t>(std::max(width, 1));
    std::vector<std::string> L;
    L.push_back("pg_stat_waits top — " + s.server + " — " + s.clock + "   (q or Ctrl-C quits)");
    L.push_back(s.status_line);

    std::map<std::string, int> by_type;
    for (const auto &x : s.sessions) by_type[x.wait_event_type.empty() ? "?" : x.wait_event_type]++;
    std::string summary = "sessions now: " + std::to_string(s.sessions.size()) + " active of " +
                          std::to_string(s.total_processes) + " processes";
    for (const auto &kv : by_type) summary += "  " + kv.first + " " + std::to_string(kv.second);
    L.push_back(summary);
    L.push_back("");

    L.push_back("TOP WAITS, LAST MINUTE (sampled)");
    if (!s.top_av.available) {
        L.push_back("  " + std::string(kNotAvailable));
    } else if (!s.top_av.error.empty()) {
        L.push_back("  error: " + s.top_av.error);
    } else if (s.last_minute.empty()) {
        L.push_back("  no samples in the last minute");
    } else {
        for (const auto &t : s.last_minute)
            L.push_back("  " + pad(t.wait_event_type, 11) + pad(t.wait_event, 24) + fmt("%6.1f%% ", t.pct) +
                        block_bar(t.pct / 100, 20));
    }
    L.push_back("");

    L.push_back(pad("PID", 8) + pad("TYPE", 16) + pad("STATE", 16) + pad("WAIT", 28) + pad("BLOCKED BY", 13) +
                pad("WAIT MS", 9) +
                pad("RUNNING", 9) + pad("QUERYID", 21) + "QUERY");
    size_t room = s.sessions.size();
    if (height > 0) {
        size_t left = static_cast<size_t>(height) > L.size() ? static_cast<size_t>(height) - L.size() : 0;
        if (room > left) room = left > 0 ? left - 1 : 0;  // keep one line for "… N more"
    }
    for (size_t i = 0; i < room; i++) {
        const auto &x = s.sessions[i];
        std::string wait = x.wait_event_type.empty() ? "" : x.wait_event_type + ":" + x.wait_event;
        L.push_back(pad(std::to_string(x.pid), 8) + pad(x.backend_type, 16) + pad(short_state(x.state), 16) + pad(wait, 28) +
                    pad(blockers_cell(x.blockers), 13) + pad(x.wait_ms ? fmt("%.1f", *x.wait_ms) : "", 9) +
                    pad(x.running_s ? fmt("%.1fs", std::max(0.0, *x.running_s)) : "", 9) + pad(x.queryid, 21) +
                    one_line(x.query));
    }
    if (room < s.sessions.size()) L.push_back("  … " + std::to_string(s.sessions.size() - room) + " more");
    if (s.sessions.empty()) L.push_back("  (no active sessions)");
    for (auto &line : L) line = fit_width(line, w);
    if (height > 0 && L.size() > static_cast<size_t>(height)) L.resize(static_cast<size_t>(height));
    return L;
}

}  // namespace psw_report
