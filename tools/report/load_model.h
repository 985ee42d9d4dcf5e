// Database load (average active sessions) from sampled cells: the chart
// sliced by one dimension, top SQL by load, and two windows compared.
// PostgreSQL-free: pg_window.cpp fills the cells, these functions only add
// and divide, so the arithmetic (partial buckets, idle time kept apart) is
// unit-tested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model.h"

namespace psw_report {

// What the load chart stacks by.
enum class Slice { WaitClass, WaitEvent, Sql, User, Database, BackendType };
const std::vector<Slice> &all_slices();
const char *slice_param(Slice s);  // URL / command-line name: "class", "event", "sql", ...
const char *slice_title(Slice s);  // "wait class", "wait event", "SQL", ...
std::optional<Slice> parse_slice(const std::string &text);

// A span of time, epoch seconds, [from, to).
struct Window {
    double from = 0;
    double to = 0;
    double seconds() const { return to > from ? to - from : 0; }
};

// Why a sample is or is not database load.
enum class SampleKind {
    Active = 0,          // running or waiting inside a statement: load
    IdleInTransaction,   // a client between statements of an open transaction
    IdleBackground,      // a background process in its idle main-loop wait (Activity)
};

// Samples of one combination of dimensions in one bucket.
struct SampleCell {
    double bucket_start = 0;  // epoch seconds
    std::string backend_type, database, user, queryid;  // "" when the source does not say
    std::string wait_event_type, wait_event;
    SampleKind kind = SampleKind::Active;
    int64_t samples = 0;
};

// Where the cells came from: the raw history ring (every dimension) or the
// server's minute buckets (wait events only, when the ring does not reach
// back far enough).
struct SampleSet {
    Window covered;          // the part of the asked window the source covers
    double period_s = 0.01;  // the sampler's period: one sample = period_s session-seconds
    bool by_wait_only = false;
    std::vector<SampleCell> cells;
};

// One band of the load chart, as points on the bucket grid.
struct LoadChart {
    Slice slice = Slice::WaitClass;
    double bucket_s = 60;
    std::vector<TimelinePoint> points;  // wait_event_type = the slice's key, avg_active over covered time
    std::vector<std::string> keys;      // heaviest first (the chart's colours follow this order)
    double cpu_count = 0;               // 0: the server did not say
    double avg_load = 0;                // over the covered window
    double idle_in_transaction = 0;     // average sessions idle in transaction (not load)
    double idle_background = 0;         // average background processes idle (not load)
    bool sliced_as_asked = true;        // false: the source could not slice so, shown by wait class
};

// Average active sessions per bucket: a bucket's samples × period divided by
// the part of the bucket the window covers, so the bucket still filling
// (or cut by the window's start) is not diluted. At most max_keys bands;
// the rest are summed as "other".
LoadChart build_load_chart(const SampleSet &set, Slice slice, double bucket_s, size_t max_keys = 8);

struct TopSql {
    std::string queryid;
    std::string text;                // full text (pg_stat_statements), "" when unknown
    int64_t samples = 0;             // its active samples (how much the shares rest on)
    double load = 0;                 // average active sessions in the window
    double idle_in_transaction = 0;  // average sessions idle in transaction after it
    std::vector<QueryWait> waits;    // average active sessions by wait event, heaviest first
    std::optional<double> exact_ms;  // exact time since reset: waits + CPU
    std::vector<QueryWait> exact;    // ms by wait event, CPU included, heaviest first
    std::optional<int64_t> calls;    // pg_stat_statements
    std::optional<double> mean_ms;   // pg_stat_statements
    int64_t slow_runs = 0;           // runs in pg_stat_waits_executions
};
// The n statements with the most load, each with its waits.
std::vector<TopSql> build_top_sql(const SampleSet &set, size_t n);

// Percent of `part` type ("CPU", "Lock", ...) in a breakdown.
double type_share(const std::vector<QueryWait> &parts, const std::string &type);

// One key (wait event or statement) in both windows, average active sessions.
struct CompareRow {
    std::string key;
    std::string wait_event_type;  // for the colour; "" for statements
    double current = 0;
    double baseline = 0;
    double delta() const { return current - baseline; }
};
// Rows of both windows by wait event ("Type:Event") or by statement, the
// largest change first.
std::vector<CompareRow> compare_by_wait(const SampleSet &current, const SampleSet &baseline, size_t n);
std::vector<CompareRow> compare_by_sql(const SampleSet &current, const SampleSet &baseline, size_t n);

// A session that held a lock others waited for, from the samples' recorded
// blockers.
struct BlockingSession {
    int pid = 0;
    std::string state;    // as the sampler last saw it (e.g. "idle in transaction")
    std::string wait;     // its own wait then, "Type:Event"
    std::string queryid;  // its statement then ("" when hidden or none)
    double blocked_s = 0; // session-seconds others spent waiting on it
    int64_t waiters = 0;  // distinct sessions it blocked
    double first = 0, last = 0;  // epoch seconds of the first and last blocked sample
    std::vector<std::string> blocked_queryids;
};

// The report's first screen: the window, database load, top SQL, blocking
// sessions and (optionally) the window compared with a baseline.
struct LoadSections {
    Window window;
    std::string window_label;  // "last 5min" or "from ... to ..."
    std::string note;          // where the samples came from, when it matters
    Availability load_av;
    LoadChart chart;
    Availability top_sql_av;
    std::vector<TopSql> top_sql;
    std::string top_sql_note;  // set when top SQL covers less than the window
    std::string exact_since;   // the exact per-query times count since this reset
    Availability blocking_av;
    std::vector<BlockingSession> blocking;
    bool compared = false;
    Availability compare_av;
    Window baseline;
    std::string baseline_label;
    std::vector<CompareRow> compare_waits, compare_sql;
    bool compare_sql_available = true;  // false: a window older than the history ring
    std::map<std::string, std::string> texts;  // queryid -> full statement text
    // The live page (serve): its path and its current parameters; "" in a file.
    std::string page_path;
    std::string window_param, from_param, to_param, compare_param, queryid_filter;
};

}  // namespace psw_report
