#include "prom_metrics.h"

#include "wait_series.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

namespace psw_report {
namespace prom {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

ClientMetric::Histogram to_prometheus_histogram(const std::vector<HistogramRow> &rows, double sum_seconds) {
    ClientMetric::Histogram h;
    uint64_t cumulative = 0;
    bool has_inf = false;
    for (const auto &r : rows) {
        cumulative += r.count;
        ClientMetric::Bucket b;
        b.cumulative_count = cumulative;
        // Bounds are whole nanoseconds (1024 ns x 2^b): rounding to the
        // nanosecond first gives `le` values that print exactly (0.004096,
        // not 0.004095999999999999), identical on every scrape and target.
        b.upper_bound = std::isinf(r.upper_ms) ? std::numeric_limits<double>::infinity()
                                               : std::round(r.upper_ms * 1e6) / 1e9;
        has_inf = has_inf || std::isinf(b.upper_bound);
        h.bucket.push_back(b);
    }
    // A histogram without the +Inf bucket is invalid in Prometheus' format.
    if (!has_inf) {
        ClientMetric::Bucket b;
        b.cumulative_count = cumulative;
        b.upper_bound = std::numeric_limits<double>::infinity();
        h.bucket.push_back(b);
    }
    h.sample_count = cumulative;
    h.sample_sum = sum_seconds;
    return h;
}

std::string counter_table(const std::string &column, std::string *kind) {
    static const std::pair<const char *, const char *> suffixes[] = {
        {"_evicted", "evictions"},   {"_evictions", "evictions"}, {"_dealloc", "evictions"},
        {"_deallocs", "evictions"},  {"_deallocations", "evictions"}, {"_dropped", "dropped"},
    };
    for (const auto &s : suffixes) {
        const std::string suf = s.first;
        if (column.size() > suf.size() && column.compare(column.size() - suf.size(), suf.size(), suf) == 0) {
            if (kind) *kind = s.second;
            return column.substr(0, column.size() - suf.size());
        }
    }
    return "";
}

double CounterGuard::apply(const std::string &key, double value) {
    auto it = series_.find(key);
    if (it == series_.end()) {
        series_[key] = Series{value, 0, round_};
        return value;
    }
    Series &s = it->second;
    if (value < s.last) s.offset += s.last - value;
    s.last = value;
    s.round = round_;
    return value + s.offset;
}

void CounterGuard::end_round() {
    for (auto it = series_.begin(); it != series_.end();)
        it = it->second.round == round_ ? std::next(it) : series_.erase(it);
}

namespace {

struct Builder {
    const std::string &target;
    CounterGuard *guard;
    std::vector<MetricFamily> out;

    MetricFamily &family(const std::string &name, const std::string &help, MetricType type) {
        for (auto &f : out)
            if (f.name == name) return f;
        out.push_back(MetricFamily{name, help, type, {}});
        return out.back();
    }
    ClientMetric metric(std::vector<std::pair<std::string, std::string>> labels) {
        ClientMetric m;
        m.label.push_back({"target", target});
        for (auto &l : labels) m.label.push_back({l.first, l.second});
        std::sort(m.label.begin(), m.label.end());
        return m;
    }
    void gauge(const std::string &name, const std::string &help, double v,
               std::vector<std::pair<std::string, std::string>> labels = {}) {
        ClientMetric m = metric(std::move(labels));
        m.gauge.value = v;
        family(kPrefix + name, help, MetricType::Gauge).metric.push_back(std::move(m));
    }
    void counter(const std::string &name, const std::string &help, double v,
                 std::vector<std::pair<std::string, std::string>> labels = {}) {
        ClientMetric m = metric(std::move(labels));
        const std::string full = kPrefix + name;
        if (guard) {
            std::string key = full;
            for (const auto &l : m.label) key += "\x1f" + l.name + "=" + l.value;
            v = guard->apply(key, v);
        }
        m.counter.value = v;
        family(full, help, MetricType::Counter).metric.push_back(std::move(m));
    }
    void opt_gauge(const std::string &name, const std::string &help, const std::optional<double> &v) {
        if (v) gauge(name, help, *v);
    }
};

// Names and help texts in one place: build_families and
// exported_metric_names() must agree.
struct Name {
    const char *name;
    MetricType type;
    const char *help;
};
const Name kNames[] = {
    {"up", MetricType::Gauge, "1 when the target answered this scrape with a usable pg_stat_waits, else 0"},
    {"down", MetricType::Gauge, "1 for the reason the target is down (unreachable, no_extension, error); absent when up"},
    {"scrape_duration_seconds", MetricType::Gauge, "Time this scrape of the target took"},
    {"connects_total", MetricType::Counter, "Connections the exporter opened to the target (more than 1: reconnects)"},
    {"sessions", MetricType::Gauge, "Non-idle sessions now, by backend type and wait event"},
    {"sampled_seconds_total", MetricType::Counter,
     "Sampled time by backend type and wait event (samples x period); its rate is average active sessions"},
    {"sampled_samples_total", MetricType::Counter, "Samples by backend type and wait event"},
    {"wait_seconds_total", MetricType::Counter, "Exact wait time by wait event (pg_stat_waits.timing = on)"},
    {"wait_calls_total", MetricType::Counter, "Exactly timed waits by wait event"},
    {"wait_max_seconds", MetricType::Gauge, "Longest single wait since reset, by wait event"},
    {"wait_duration_seconds", MetricType::Histogram,
     "Exact wait durations by wait event (log2 buckets of pg_stat_waits_histogram)"},
    {"query_sampled_seconds_total", MetricType::Counter,
     "Sampled time of the top queries (by sampled time) by wait event type"},
    {"query_seconds_total", MetricType::Counter,
     "Exact time of the top queries (by exact time) by wait event type; CPU is elapsed minus waits"},
    {"slow_runs", MetricType::Gauge,
     "Slow top-level runs kept in pg_stat_waits_executions (its last 1000), by queryid; empty queryid: hidden"},
    {"sampler_up", MetricType::Gauge, "1 when the sampler background worker runs"},
    {"sample_period_seconds", MetricType::Gauge, "Sampling period (0: sampler idle)"},
    {"samples_taken_total", MetricType::Counter, "Sampling rounds since start"},
    {"sampler_lag_seconds", MetricType::Gauge, "How late the sampler's last round was"},
    {"last_sample_age_seconds", MetricType::Gauge, "Seconds since the last sample, by the server's clock"},
    {"timing_enabled", MetricType::Gauge, "1 when pg_stat_waits.timing is on (server default)"},
    {"interposed_calls", MetricType::Gauge, "C library calls timed by exact timing (0: exact waits unavailable)"},
    {"shmem_bytes", MetricType::Gauge, "Shared memory used by pg_stat_waits"},
    {"stats_reset_timestamp_seconds", MetricType::Gauge, "When the statistics were last reset (Unix time)"},
    {"table_entries", MetricType::Gauge, "Entries in use in a fixed-size table (history, profile, queries)"},
    {"table_capacity", MetricType::Gauge, "Capacity of a fixed-size table"},
    {"dropped_total", MetricType::Counter, "Entries a full table could not take, by table"},
    {"evictions_total", MetricType::Counter, "Entries a full table evicted to make room, by table"},
};

const Name &nm(const std::string &name) {
    for (const auto &n : kNames)
        if (name == n.name) return n;
    static const Name none{"", MetricType::Untyped, ""};
    return none;
}

}  // namespace

std::vector<MetricFamily> build_families(const std::string &target, const TargetData &d, CounterGuard *guard) {
    Builder b{target, guard, {}};
    auto G = [&](const char *n, double v, std::vector<std::pair<std::string, std::string>> l = {}) {
        b.gauge(n, nm(n).help, v, std::move(l));
    };
    auto C = [&](const char *n, double v, std::vector<std::pair<std::string, std::string>> l = {}) {
        b.counter(n, nm(n).help, v, std::move(l));
    };
    G("up", d.up ? 1 : 0);
    if (!d.up) G("down", 1, {{"reason", d.down_reason.empty() ? "error" : d.down_reason}});
    G("scrape_duration_seconds", d.scrape_seconds);
    C("connects_total", d.connects);
    if (!d.up) return std::move(b.out);
    // Every family is declared (HELP and TYPE) even when this server has no
    // series for it now (no session waiting, no eviction counter in its
    // status view), so what the exporter offers can be read off any scrape.
    for (const auto &n : kNames) b.family(std::string(kPrefix) + n.name, n.help, n.type);

    if (guard) guard->begin_round();
    // An event's labels, with wait_series where PostgreSQL renamed it
    // between releases (17's case changes, 19's buffer waits: wait_series.h).
    auto event_labels = [](const std::string &type, const std::string &event) {
        std::vector<std::pair<std::string, std::string>> l = {{"wait_event_type", type}, {"wait_event", event}};
        if (const char *series = wait_series(type, event)) l.push_back({"wait_series", series});
        return l;
    };
    for (const auto &s : d.sessions) {
        auto l = event_labels(s.wait_event_type, s.wait_event);
        l.push_back({"backend_type", s.backend_type});
        G("sessions", s.sessions, l);
    }
    for (const auto &s : d.sampled) {
        auto l = event_labels(s.wait_event_type, s.wait_event);
        l.push_back({"backend_type", s.backend_type});
        C("sampled_seconds_total", s.seconds, l);
        C("sampled_samples_total", s.samples, l);
    }
    for (const auto &e : d.exact) {
        auto l = event_labels(e.wait_event_type, e.wait_event);
        if (!e.backend_type.empty()) l.push_back({"backend_type", e.backend_type});
        C("wait_seconds_total", e.seconds, l);
        C("wait_calls_total", e.calls, l);
        G("wait_max_seconds", e.max_seconds, l);
    }
    for (const auto &h : d.histograms) {
        ClientMetric m = b.metric(event_labels(h.wait_event_type, h.wait_event));
        m.histogram = to_prometheus_histogram(h.rows, h.sum_seconds);
        b.family(std::string(kPrefix) + "wait_duration_seconds", nm("wait_duration_seconds").help,
                 MetricType::Histogram)
            .metric.push_back(std::move(m));
    }
    for (const auto &q : d.query_sampled)
        C("query_sampled_seconds_total", q.seconds, {{"queryid", q.queryid}, {"wait_event_type", q.wait_event_type}});
    for (const auto &q : d.query_exact)
        C("query_seconds_total", q.seconds, {{"queryid", q.queryid}, {"wait_event_type", q.wait_event_type}});
    for (const auto &r : d.slow_runs) G("slow_runs", r.second, {{"queryid", r.first}});

    auto OG = [&](const char *n, const std::optional<double> &v) {
        if (v) G(n, *v);
    };
    OG("sampler_up", d.sampler_up);
    OG("sample_period_seconds", d.sample_period_seconds);
    if (d.samples_taken) C("samples_taken_total", *d.samples_taken);
    OG("sampler_lag_seconds", d.sampler_lag_seconds);
    OG("last_sample_age_seconds", d.last_sample_age_seconds);
    OG("timing_enabled", d.timing_enabled);
    OG("interposed_calls", d.interposed_calls);
    OG("shmem_bytes", d.shmem_bytes);
    OG("stats_reset_timestamp_seconds", d.stats_reset_seconds);
    for (const auto &t : d.tables) {
        G("table_entries", t.entries, {{"table", t.table}});
        G("table_capacity", t.capacity, {{"table", t.table}});
    }
    for (const auto &x : d.dropped) C("dropped_total", x.second, {{"table", x.first}});
    for (const auto &x : d.evictions) C("evictions_total", x.second, {{"table", x.first}});
    if (guard) guard->end_round();
    return std::move(b.out);
}

std::vector<MetricFamily> merge_families(std::vector<std::vector<MetricFamily>> parts) {
    std::vector<MetricFamily> out;
    for (auto &part : parts)
        for (auto &f : part) {
            auto it = std::find_if(out.begin(), out.end(), [&](const MetricFamily &o) { return o.name == f.name; });
            if (it == out.end()) {
                out.push_back(std::move(f));
            } else {
                for (auto &m : f.metric) it->metric.push_back(std::move(m));
            }
        }
    std::sort(out.begin(), out.end(), [](const MetricFamily &a, const MetricFamily &b) { return a.name < b.name; });
    return out;
}

std::vector<std::string> exported_metric_names() {
    std::vector<std::string> v;
    for (const auto &n : kNames) {
        std::string full = std::string(kPrefix) + n.name;
        if (n.type == MetricType::Histogram) {
            v.push_back(full + "_bucket");
            v.push_back(full + "_sum");
            v.push_back(full + "_count");
        } else {
            v.push_back(full);
        }
    }
    return v;
}

bool valid_target_name(const std::string &name) {
    if (name.empty() || name.size() > 100) return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-')) return false;
    return true;
}

bool parse_targets(const std::string &text, std::vector<std::pair<std::string, std::string>> *out,
                   std::string *error) {
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    auto trim = [](std::string s) {
        size_t a = s.find_first_not_of(" \t\r");
        size_t z = s.find_last_not_of(" \t\r");
        return a == std::string::npos ? std::string() : s.substr(a, z - a + 1);
    };
    while (std::getline(in, line)) {
        lineno++;
        std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        size_t eq = t.find('=');
        if (eq == std::string::npos) {
            *error = "line " + std::to_string(lineno) + ": expected NAME = CONNECTION STRING";
            return false;
        }
        std::string name = trim(t.substr(0, eq)), dsn = trim(t.substr(eq + 1));
        if (!valid_target_name(name)) {
            *error = "line " + std::to_string(lineno) + ": invalid target name \"" + name +
                     "\" (letters, digits, _ . : - only)";
            return false;
        }
        if (dsn.empty()) {
            *error = "line " + std::to_string(lineno) + ": empty connection string for " + name;
            return false;
        }
        for (const auto &e : *out)
            if (e.first == name) {
                *error = "line " + std::to_string(lineno) + ": target " + name + " given twice";
                return false;
            }
        out->emplace_back(name, dsn);
    }
    return true;
}

}  // namespace prom
}  // namespace psw_report
