// What `pg_stat_waits_report serve` exports, as plain data, and how it becomes
// Prometheus metric families. PostgreSQL-free (prometheus-cpp core types
// only) so that names, labels, units and the histogram bucket mapping are
// unit-tested without a server; exporter.cpp fills TargetData from a server.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

namespace psw_report {
namespace prom {

// Every metric name starts with this.
constexpr const char *kPrefix = "pg_stat_waits_";

// Sampled time of one (backend type, wait event), summed over databases,
// users and queries of the profile.
struct SampledEvent {
    std::string backend_type, wait_event_type, wait_event;
    double samples = 0;
    double seconds = 0;  // est_time / 1000
};

// Exact timing of one wait event (backend_type empty when the server's
// pg_stat_waits view has no such column).
struct ExactEvent {
    std::string backend_type, wait_event_type, wait_event;
    double calls = 0;
    double seconds = 0;
    double max_seconds = 0;
};

// One row of pg_stat_waits_histogram(): [lower_ms, upper_ms) and its count;
// the last bucket's upper_ms is +infinity.
struct HistogramRow {
    double lower_ms = 0;
    double upper_ms = 0;
    uint64_t count = 0;
};

struct EventHistogram {
    std::string wait_event_type, wait_event;
    std::vector<HistogramRow> rows;  // in order of lower_ms
    double sum_seconds = 0;          // total wait time of the event
};

// Per query and wait event type (the class: Lock, IO, CPU...).
struct QueryTime {
    std::string queryid, wait_event_type;
    double seconds = 0;
};

struct SessionCount {
    std::string backend_type, wait_event_type, wait_event;
    double sessions = 0;
};

// A fixed-size table of the extension and how full it is.
struct TableFill {
    std::string table;  // history, profile, queries
    double entries = 0;
    double capacity = 0;
};

// Everything one scrape of one target yields.
struct TargetData {
    bool up = false;
    std::string down_reason;  // when !up: unreachable, no_extension, error
    std::string error;        // the message, for the log (never a label)
    double scrape_seconds = 0;
    double connects = 0;      // connections made to this target since start

    std::vector<SessionCount> sessions;
    std::vector<SampledEvent> sampled;
    std::vector<ExactEvent> exact;
    std::vector<EventHistogram> histograms;
    std::vector<QueryTime> query_sampled;
    std::vector<QueryTime> query_exact;
    // Slow runs kept in pg_stat_waits_executions, by queryid ("" when hidden).
    std::vector<std::pair<std::string, double>> slow_runs;

    // pg_stat_waits_status and pg_stat_waits_timing_info; absent columns stay empty.
    std::optional<double> sampler_up, sample_period_seconds, samples_taken, sampler_lag_seconds,
        last_sample_age_seconds, timing_enabled, interposed_calls, shmem_bytes, stats_reset_seconds;
    std::vector<TableFill> tables;
    std::vector<std::pair<std::string, double>> dropped;    // table -> count
    std::vector<std::pair<std::string, double>> evictions;  // table -> count
};

// Prometheus histogram from the extension's log2 buckets: every bucket's
// upper bound becomes an `le` bound in seconds (the open last bucket is
// +Inf), counts become cumulative. The extension's buckets are half-open
// [lo, hi) and `le` is inclusive; for measured durations the difference is a
// single nanosecond value at each bound.
prometheus::ClientMetric::Histogram to_prometheus_histogram(const std::vector<HistogramRow> &rows,
                                                            double sum_seconds);

// The table named by a status column counting evictions or drops:
// "profile_evicted" -> "profile", "query_deallocations" -> "query"; empty
// when the column is not such a counter. kind is "evictions" or "dropped".
std::string counter_table(const std::string &column, std::string *kind);

// Keeps counters monotonic across entries the server evicted: a profile
// sum falls when a key is evicted, which Prometheus would read as a reset
// (rate() would then add the whole value again). A fall is carried as an
// offset until clear() (called when the server's statistics were reset or
// the connection was re-established, where a real reset is possible).
class CounterGuard {
public:
    double apply(const std::string &key, double value);
    void begin_round() { round_++; }
    void end_round();  // forgets series not seen this round (bounded memory)
    void clear() { series_.clear(); }
    size_t size() const { return series_.size(); }

private:
    struct Series {
        double last = 0, offset = 0;
        uint64_t round = 0;
    };
    std::map<std::string, Series> series_;
    uint64_t round_ = 0;
};

// The metric families of one target, every series labelled target=<name>.
// guard may be null (no monotonic correction).
std::vector<prometheus::MetricFamily> build_families(const std::string &target, const TargetData &d,
                                                     CounterGuard *guard);

// Families of several targets merged by name (one HELP/TYPE each), in a
// stable order.
std::vector<prometheus::MetricFamily> merge_families(std::vector<std::vector<prometheus::MetricFamily>> parts);

// Every metric name build_families can produce (histograms with their
// _bucket/_sum/_count series), for documentation checks and the dashboard test.
std::vector<std::string> exported_metric_names();

// Targets for serve: "name = connection string" lines, '#' comments, blank
// lines ignored. Names are [A-Za-z0-9_.:-]+ and unique. Returns false with
// *error set (with the line number) on a malformed file.
bool parse_targets(const std::string &text, std::vector<std::pair<std::string, std::string>> *out,
                   std::string *error);
bool valid_target_name(const std::string &name);

}  // namespace prom
}  // namespace psw_report
