#include "html_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "report_html.h"
#include "svg_chart.h"

namespace psw_report {

const char *const kNotAvailable = "not available in this server's pg_stat_waits";

std::string fmtd(const char *f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string fmt_ms(double ms) {
    if (ms >= 60000) return fmtd("%.1f min", ms / 60000);
    if (ms >= 1000) return fmtd("%.2f s", ms / 1000);
    if (ms >= 10) return fmtd("%.1f ms", ms);
    return fmtd("%.2f ms", ms);
}

std::string fmt_bytes(double b) {
    if (b >= 1024.0 * 1024 * 1024) return fmtd("%.1f GB", b / (1024.0 * 1024 * 1024));
    if (b >= 1024.0 * 1024) return fmtd("%.1f MB", b / (1024.0 * 1024));
    if (b >= 1024.0) return fmtd("%.1f kB", b / 1024.0);
    return fmtd("%.0f B", b);
}

std::string unavailable_html(const Availability &av) {
    if (av.available && av.error.empty()) return "";
    if (!av.available)
        return "<p class=\"na\">" + std::string(kNotAvailable) +
               (av.missing_object.empty() ? "" : " (no <code>" + html_escape(av.missing_object) + "</code>)") + "</p>\n";
    return "<p class=\"error\">could not read this section: " + html_escape(av.error) + "</p>\n";
}

std::string section_html(const char *id, const std::string &title, const std::string &body) {
    return std::string("<section id=\"") + id + "\">\n<h2>" + html_escape(title) + "</h2>\n" + body + "</section>\n";
}

std::string type_swatch(const std::string &type) {
    return "<span class=\"sw\" style=\"background:" + wait_type_color(type) + "\"></span>";
}

std::string pct_bar(double fraction) {
    fraction = std::max(0.0, std::min(1.0, fraction));
    return "<span class=\"pbar\"><span style=\"width:" + fmtd("%.1f", fraction * 100) + "%\"></span></span>";
}

std::string statement_html(const std::string &text, const std::string &missing) {
    if (text.empty()) return "<i>" + html_escape(missing) + "</i>";
    const size_t kShort = 160;
    size_t nl = text.find('\n');
    if (text.size() <= kShort && nl == std::string::npos) return "<code class=\"sql\">" + html_escape(text) + "</code>";
    // Cut on a character boundary (UTF-8 continuation bytes are 10xxxxxx).
    size_t cut = std::min({kShort, text.size(), nl});
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) cut--;
    return "<details class=\"sql\"><summary><code>" + html_escape(text.substr(0, cut)) +
           "</code> <span class=\"cut\">… (" + std::to_string(text.size()) +
           " characters: open for the full text)</span></summary><pre class=\"sql\">" + html_escape(text) +
           "</pre></details>";
}

std::string clock_text(double epoch, double utc_offset_s) {
    time_t t = static_cast<time_t>(std::floor(epoch + utc_offset_s));
    struct tm tm {};
    gmtime_r(&t, &tm);
    char b[32];
    std::strftime(b, sizeof b, "%H:%M:%S", &tm);
    return b;
}

std::string url_encode(const std::string &s) {
    static const char *hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

}  // namespace psw_report
