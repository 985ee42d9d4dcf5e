// What the report and the live view show, as plain data: filled from the
// server by pg_data.cpp, rendered by report_html.cpp and top_screen.cpp.
// Keeping it PostgreSQL-free lets the renderers be unit-tested.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace psw_report {

// A section whose server object is absent (older or partial pg_stat_waits)
// is rendered as "not available" rather than failing the report.
struct Availability {
    bool available = false;
    std::string missing_object;  // set when !available
    std::string error;           // set when the object exists but reading it failed
};

struct TimelinePoint {
    double bucket_start = 0;  // epoch seconds
    std::string wait_event_type;
    double avg_active = 0;
};

struct TopEvent {
    std::string wait_event_type;
    std::string wait_event;
    int64_t samples = 0;
    double pct = 0;
};

struct ExactEvent {
    std::string wait_event_type;
    std::string wait_event;
    std::string backend_type;  // "" on a server whose pg_stat_waits does not split by it
    int64_t calls = 0;
    double total_ms = 0;
    double mean_ms = 0;
    double max_ms = 0;
};

// One (query, wait event) cell of a query's breakdown.
struct QueryWait {
    std::string wait_event_type;
    std::string wait_event;
    double value = 0;  // samples (sampled) or milliseconds (exact)
};

struct QueryRow {
    std::string queryid;  // text: bigint ids are shown as PostgreSQL prints them
    std::string query_text;  // from pg_stat_statements when installed, else empty
    double total = 0;        // sum of breakdown values
    std::vector<QueryWait> breakdown;  // largest first
};

struct HistogramBucket {
    double lower_ms = 0;
    double upper_ms = 0;
    int64_t count = 0;
};

struct Histogram {
    std::string wait_event_type;
    std::string wait_event;
    std::vector<HistogramBucket> buckets;
};

// One slow top-level run (pg_stat_waits_executions).
struct SlowRun {
    std::string started;  // server's text
    int pid = 0;
    std::string queryid;  // empty when hidden
    std::string query;    // empty when hidden
    double elapsed_ms = 0;
    double cpu_ms = 0;
    std::vector<QueryWait> parts;       // its waits (ms), heaviest first, then CPU
    std::vector<std::string> blockers;  // "pid 123 (idle in transaction, Client:ClientRead, queryid 42)"
};

struct LoadSections;  // load_model.h

struct ReportData {
    std::string server;        // host:port/db as connected
    std::string server_version;
    std::string generated_at;  // server's now(), text
    double now_epoch = 0;
    double utc_offset_s = 0;   // server time zone offset, for axis labels
    std::string timezone;
    double since_s = 3600;
    double bucket_s = 60;

    // Non-idle processes at the time of the report, by wait event.
    Availability sessions_av;
    std::vector<TopEvent> sessions_now;  // samples = number of sessions
    int processes = 0;

    Availability top_av;
    std::vector<TopEvent> top;

    Availability exact_av;
    std::vector<ExactEvent> exact;  // without idle main-loop waits (Activity)
    double exact_idle_ms = 0;       // those, summed

    Availability sampled_queries_av;
    std::string profile_since;  // stats_reset, text
    std::vector<QueryRow> sampled_queries;

    Availability exact_queries_av;
    std::vector<QueryRow> exact_queries;

    Availability slow_runs_av;
    std::vector<SlowRun> slow_runs;  // slowest first

    Availability histogram_av;
    std::vector<Histogram> histograms;

    Availability status_av;
    std::vector<std::pair<std::string, std::string>> status;  // column, value ("" for NULL)
    bool timing_on = false;
    std::string cpu_count;  // pg_stat_waits_status.cpu_count (1.2), "" when absent

    // Database load, top SQL, blocking sessions, comparison (load_model.h).
    std::shared_ptr<LoadSections> load;
};

// One process in the live view.
struct Session {
    int pid = 0;
    std::string backend_type;
    std::string state;
    std::string wait_event_type;
    std::string wait_event;
    std::optional<double> wait_ms;
    std::string queryid;
    std::optional<double> running_s;
    std::string query;  // from pg_stat_activity, same pid
    std::vector<int> blockers;  // pids holding the lock it waits for (Lock waits only)
};

struct TopSnapshot {
    std::string server;
    std::string clock;  // server's time of day
    int total_processes = 0;
    std::vector<Session> sessions;  // not idle
    Availability top_av;
    std::vector<TopEvent> last_minute;
    std::string status_line;  // sampler health in one line
};

}  // namespace psw_report
