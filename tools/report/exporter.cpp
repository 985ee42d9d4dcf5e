// The exporter: targets, what one scrape reads, and the HTTP side.
//
// What a scrape reads (never pg_stat_waits_history, _top or _timeline, whose
// cost grows with the history size): the status row, the timing table fill,
// sessions now (one row per process), the profile once (aggregated by backend
// type and event, and for the top-N queries, in one statement), the exact
// timing table (one row per event) and the histograms of at most
// --histogram-events events; the per-query timing table at most once per
// --slow-interval.
#include "exporter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <sstream>

#include "pg_data.h"
#include "pg_util.h"
#include "prom_metrics.h"
#include "serve_http.h"
#include "tls_context.h"
#include "web_config.h"

namespace psw_report {

namespace {

using prometheus::MetricFamily;
using namespace psw_report::prom;

void log_line(const std::string &s) { serve_log(s); }

// The sampled views' wait names as PostgreSQL has them: on a Citus node the
// extension shows a client backend's ClientRead that waits for another
// server as Remote/OtherServer; the metrics keep one series,
// Client/ClientRead, as pg_stat_waits' exact timing and pg_wait_sampling do.
const std::string kPgWaitNames =
    "CASE WHEN wait_event_type = 'Remote' AND wait_event = 'OtherServer' THEN 'Client' ELSE wait_event_type "
    "END AS wait_event_type, CASE WHEN wait_event_type = 'Remote' AND wait_event = 'OtherServer' "
    "THEN 'ClientRead' ELSE wait_event END AS wait_event";

class Target {
public:
    Target(std::string name, std::string conninfo, int top_n, int hist_events, double slow_interval_s)
        : name_(std::move(name)),
          conninfo_(std::move(conninfo)),
          top_n_(top_n),
          hist_events_(hist_events),
          slow_interval_s_(slow_interval_s) {}

    const std::string &name() const { return name_; }
    const std::string &conninfo() const { return conninfo_; }
    int top_n() const { return top_n_; }

    std::vector<MetricFamily> collect() {
        std::lock_guard<std::mutex> g(mu_);
        TargetData d;
        auto t0 = std::chrono::steady_clock::now();
        try {
            if (!conn_) connect(d);
            if (conn_) {
                read(d);
                d.up = true;
            }
        } catch (const pqxx::broken_connection &e) {
            fail(d, "unreachable", e.what());
        } catch (const std::exception &e) {
            fail(d, conn_ && conn_->is_open() ? "error" : "unreachable", e.what());
        }
        d.connects = static_cast<double>(connects_);
        d.scrape_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return build_families(name_, d, &guard_);
    }

private:
    void fail(TargetData &d, const std::string &reason, const std::string &msg) {
        d.up = false;
        if (d.down_reason.empty()) d.down_reason = reason;
        d.error = first_line(msg);
        // The next scrape reconnects and looks at the extension again (it
        // may have been created, upgraded or dropped meanwhile).
        conn_.reset();
        if (d.error != last_error_) log_line("target " + name_ + ": " + d.down_reason + ": " + d.error);
        last_error_ = d.error;
    }

    pqxx::result run(const std::string &sql) {
        pqxx::nontransaction tx(*conn_);
        return tx.exec(sql);
    }

    std::string q(const std::string &object) const { return conn_->quote_name(schema_) + "." + conn_->quote_name(object); }
    bool has(const std::string &object) const { return objects_.count(object) != 0; }
    bool has_col(const std::string &view, const std::string &col) const { return columns_.count(view + "." + col) != 0; }

    void connect(TargetData &d) {
        auto c = std::make_unique<pqxx::connection>(conninfo_);
        connects_++;
        conn_ = std::move(c);
        guard_.clear();  // a restarted server may really have reset its counters
        objects_.clear();
        columns_.clear();
        queries_read_ = false;
        last_reset_.clear();
        run("SET statement_timeout = '10s'");
        pqxx::result ext = run(
            "SELECT n.nspname, e.oid::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'pg_stat_waits'");
        if (ext.empty()) {
            d.down_reason = "no_extension";
            throw std::runtime_error("the pg_stat_waits extension is not installed in database " +
                                     std::string(conn_->dbname() ? conn_->dbname() : "?"));
        }
        schema_ = str(ext[0][0]);
        pqxx::result objs = run(extension_members_sql(conn_->quote(str(ext[0][1]))));
        for (const auto &row : objs)
            if (!row[0].is_null()) objects_.insert(row[0].c_str());
        // Columns of the views, once per connection: an older or newer
        // extension may lack or add some (backend_type, eviction counters).
        pqxx::result cols = run(
            "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = " +
            conn_->quote(schema_) + " AND c.relname LIKE 'pg\\_stat\\_waits%' AND a.attnum > 0 AND NOT a.attisdropped");
        for (const auto &row : cols) columns_.insert(str(row[0]) + "." + str(row[1]));
        if (!has("pg_stat_waits_status")) {
            d.down_reason = "no_extension";
            throw std::runtime_error("pg_stat_waits_status is missing from the installed extension");
        }
        log_line("target " + name_ + ": connected (backend pid " + std::to_string(conn_->backendpid()) + ")");
        last_error_.clear();
    }

    void read(TargetData &d) {
        read_status(d);
        if (has("pg_stat_waits_timing_info")) {
            pqxx::result r = run("SELECT * FROM " + q("pg_stat_waits_timing_info") + "()");
            if (!r.empty()) read_counters(r, d);
        }
        if (has("pg_stat_waits_activity")) {
            pqxx::result r = run(
                "SELECT coalesce(backend_type, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), "
                "count(*)::float8 FROM (SELECT backend_type, " + kPgWaitNames + ", pid, state FROM " +
                q("pg_stat_waits_activity") + ") a" +
                " WHERE pid <> pg_backend_pid() AND coalesce(state, '') <> 'idle' "
                "AND wait_event_type IS DISTINCT FROM 'Activity' AND (backend_type = 'client backend' "
                "OR coalesce(state, '') <> '' OR wait_event_type IN ('CPU', 'IO', 'Lock', 'LWLock')) "
                "GROUP BY 1, 2, 3");
            for (const auto &row : r) d.sessions.push_back({str(row[0]), str(row[1]), str(row[2]), dbl(row[3])});
        }
        const std::string n = std::to_string(top_n_);
        if (has("pg_stat_waits_profile")) {
            // One pass over the profile (at most profile_max rows) for both
            // the per-event sums and the top queries.
            pqxx::result r = run(
                "WITH p AS MATERIALIZED (SELECT backend_type, queryid, " + kPgWaitNames + ", samples, "
                "est_time FROM " + q("pg_stat_waits_profile") + "), "
                "top AS (SELECT queryid FROM p WHERE queryid IS NOT NULL AND queryid <> 0 GROUP BY queryid "
                "ORDER BY sum(samples) DESC, queryid LIMIT " + n + ") "
                "SELECT 'e', coalesce(backend_type, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), "
                "sum(samples)::float8, sum(est_time)::float8 FROM p GROUP BY 2, 3, 4 "
                "UNION ALL SELECT 'q', queryid::text, coalesce(wait_event_type, ''), '', sum(samples)::float8, "
                "sum(est_time)::float8 FROM p JOIN top USING (queryid) GROUP BY 2, 3");
            for (const auto &row : r) {
                if (str(row[0]) == "e")
                    d.sampled.push_back({str(row[1]), str(row[2]), str(row[3]), dbl(row[4]), dbl(row[5]) / 1000.0});
                else
                    d.query_sampled.push_back({str(row[1]), str(row[2]), dbl(row[5]) / 1000.0});
            }
        }
        if (has("pg_stat_waits")) {
            const bool bt = has_col("pg_stat_waits", "backend_type");
            pqxx::result r = run(std::string("SELECT ") + (bt ? "coalesce(backend_type, '')" : "''") +
                                 ", wait_event_type, wait_event, calls::float8, total_time, max_time FROM " +
                                 q("pg_stat_waits") + " WHERE calls > 0");
            for (const auto &row : r)
                d.exact.push_back({str(row[0]), str(row[1]), str(row[2]), dbl(row[3]), dbl(row[4]) / 1000.0,
                                   dbl(row[5]) / 1000.0});
            if (has("pg_stat_waits_histogram") && hist_events_ > 0) {
                // The costliest events except the idle main loops (Activity),
                // whose durations say only how long processes slept.
                pqxx::result h = run(
                    "SELECT x.t, x.e, x.total, h.lower_ms, h.upper_ms, h.count FROM (SELECT wait_event_type t, "
                    "wait_event e, sum(total_time)::float8 total FROM " + q("pg_stat_waits") +
                    " WHERE calls > 0 AND wait_event_type <> 'Activity' GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT " +
                    std::to_string(hist_events_) + ") x, LATERAL " + q("pg_stat_waits_histogram") +
                    "(x.t, x.e) h ORDER BY x.t, x.e, h.lower_ms");
                for (const auto &row : h) {
                    if (d.histograms.empty() || d.histograms.back().wait_event_type != str(row[0]) ||
                        d.histograms.back().wait_event != str(row[1]))
                        d.histograms.push_back({str(row[0]), str(row[1]), {}, dbl(row[2]) / 1000.0});
                    HistogramRow b;
                    b.lower_ms = dbl(row[3]);
                    b.upper_ms = dbl(row[4]);  // 'Infinity' parses as inf
                    b.count = static_cast<uint64_t>(row[5].as<int64_t>());
                    d.histograms.back().rows.push_back(b);
                }
            }
        }
        if (has("pg_stat_waits_queries")) {
            // The per-query timing table is the largest thing a scrape reads
            // (up to 2 x profile_max x wait types rows); its top N is
            // refreshed every --slow-interval and served from this cache in
            // between (counters: a stale value is still a valid value).
            auto now = std::chrono::steady_clock::now();
            if (!queries_read_ || now - queries_at_ >= std::chrono::duration<double>(slow_interval_s_)) {
                pqxx::result r = run(
                    "WITH q AS MATERIALIZED (SELECT queryid, wait_event_type, total_time FROM " +
                    q("pg_stat_waits_queries") + " WHERE queryid IS NOT NULL AND queryid <> 0), "
                    "top AS (SELECT queryid FROM q GROUP BY queryid ORDER BY sum(total_time) DESC, queryid LIMIT " +
                    n + ") SELECT queryid::text, coalesce(wait_event_type, ''), sum(total_time)::float8 FROM q "
                    "JOIN top USING (queryid) GROUP BY 1, 2");
                query_exact_.clear();
                for (const auto &row : r) query_exact_.push_back({str(row[0]), str(row[1]), dbl(row[2]) / 1000.0});
                queries_read_ = true;
                queries_at_ = now;
            }
            d.query_exact = query_exact_;
        }
        if (has("pg_stat_waits_executions")) {
            pqxx::result r = run("SELECT coalesce(queryid::text, ''), count(*)::float8 FROM " +
                                 q("pg_stat_waits_executions") + " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT " + n);
            for (const auto &row : r) d.slow_runs.emplace_back(str(row[0]), dbl(row[1]));
        }
    }

    void read_status(TargetData &d) {
        std::string sql = "SELECT *";
        if (has_col("pg_stat_waits_status", "last_sample_time"))
            sql += ", extract(epoch FROM clock_timestamp() - last_sample_time)::float8 AS psw__age";
        if (has_col("pg_stat_waits_status", "stats_reset"))
            sql += ", extract(epoch FROM stats_reset)::float8 AS psw__reset, stats_reset::text AS psw__reset_text";
        pqxx::result r = run(sql + " FROM " + q("pg_stat_waits_status"));
        if (r.empty()) return;
        const auto &row = r[0];
        auto col = [&](const char *name) -> int {
            for (pqxx::row::size_type i = 0; i < r.columns(); i++)
                if (std::strcmp(r.column_name(i), name) == 0) return static_cast<int>(i);
            return -1;
        };
        auto num = [&](const char *name, double scale) -> std::optional<double> {
            int i = col(name);
            if (i < 0 || row[i].is_null()) return std::nullopt;
            return row[i].as<double>() * scale;
        };
        if (int i = col("sampler_pid"); i >= 0) d.sampler_up = row[i].is_null() ? 0.0 : 1.0;
        d.sample_period_seconds = num("sample_period_ms", 0.001);
        d.samples_taken = num("samples_taken", 1);
        d.sampler_lag_seconds = num("sampler_lag_ms", 0.001);
        d.last_sample_age_seconds = num("psw__age", 1);
        d.shmem_bytes = num("shmem_bytes", 1);
        d.stats_reset_seconds = num("psw__reset", 1);
        if (int i = col("timing"); i >= 0 && !row[i].is_null()) d.timing_enabled = str(row[i]) == "t" ? 1.0 : 0.0;
        if (int i = col("interposed"); i >= 0 && !row[i].is_null()) {
            std::string a = str(row[i]);  // text[] as {pread,pwrite,...}
            double n = 0;
            if (a.size() > 2) {
                n = 1;
                for (char c : a)
                    if (c == ',') n++;
            }
            d.interposed_calls = n;
        }
        {
            int i = col("psw__reset_text");
            std::string reset = i >= 0 ? str(row[i]) : std::string();
            // pg_stat_waits_reset(): the counters really start again.
            if (!last_reset_.empty() && reset != last_reset_) guard_.clear();
            last_reset_ = reset;
        }
        auto hu = num("history_used", 1), hs = num("history_size", 1);
        if (hu && hs) d.tables.push_back({"history", *hu, *hs});
        read_counters(r, d);
    }

    // Fill levels (<table>_entries with <table>_max) and drop/eviction
    // counters of whatever columns the row has.
    static void read_counters(const pqxx::result &r, TargetData &d) {
        const auto &row = r[0];
        for (pqxx::row::size_type i = 0; i < r.columns(); i++) {
            std::string c = r.column_name(i);
            if (row[i].is_null()) continue;
            std::string kind, table = counter_table(c, &kind);
            if (!table.empty()) {
                (kind == "evictions" ? d.evictions : d.dropped).emplace_back(table, dbl(row[i]));
                continue;
            }
            const std::string suf = "_entries";
            if (c.size() > suf.size() && c.compare(c.size() - suf.size(), suf.size(), suf) == 0) {
                std::string t = c.substr(0, c.size() - suf.size());
                for (pqxx::row::size_type j = 0; j < r.columns(); j++)
                    if (t + "_max" == r.column_name(j) && !row[j].is_null())
                        d.tables.push_back({t, dbl(row[i]), dbl(row[j])});
            }
        }
    }

    const std::string name_, conninfo_;
    const int top_n_, hist_events_;
    const double slow_interval_s_;
    bool queries_read_ = false;  // query_exact_ holds a read of this connection
    std::chrono::steady_clock::time_point queries_at_;
    std::vector<QueryTime> query_exact_;
    std::mutex mu_;
    std::unique_ptr<pqxx::connection> conn_;
    std::string schema_;
    std::set<std::string> objects_, columns_;
    std::string last_reset_, last_error_;
    uint64_t connects_ = 0;
    CounterGuard guard_;
};

std::vector<std::unique_ptr<Target>> targets_;

bool read_file(const std::string &path, std::string *out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::stringstream ss;
    ss << f.rdbuf();
    *out = ss.str();
    return true;
}

}  // namespace

int run_serve(const Options &o) {
    // The web config first: a bad one stops the start before anything
    // connects or listens, with the field it is about.
    WebConfig web;
    void *tls_ctx = nullptr;
    if (!o.web_config_path.empty()) {
        std::string err;
        if (!load_web_config(o.web_config_path, &web, &err)) {
            std::cerr << "pg_stat_waits_report: --web.config.file " << err << "\n";
            return 2;
        }
        if (web.tls && !(tls_ctx = make_tls_context(web, &err))) {
            std::cerr << "pg_stat_waits_report: --web.config.file " << o.web_config_path << ": " << err << "\n";
            return 2;
        }
    }
    std::vector<std::pair<std::string, std::string>> targets;
    if (!o.config_path.empty()) {
        std::string text, err;
        if (!read_file(o.config_path, &text)) {
            std::cerr << "pg_stat_waits_report: cannot read " << o.config_path << "\n";
            return 1;
        }
        if (!parse_targets(text, &targets, &err)) {
            std::cerr << "pg_stat_waits_report: " << o.config_path << ": " << err << "\n";
            return 2;
        }
    }
    for (const auto &t : o.targets) {
        if (!valid_target_name(t.first)) {
            std::cerr << "pg_stat_waits_report: invalid target name \"" << t.first << "\"\n";
            return 2;
        }
        for (const auto &e : targets)
            if (e.first == t.first) {
                std::cerr << "pg_stat_waits_report: target " << t.first << " given twice\n";
                return 2;
            }
        targets.push_back(t);
    }
    if (targets.empty()) targets.emplace_back("default", "");
    for (const auto &t : targets) {
        Options c = o;
        if (!t.second.empty() || !o.config_path.empty() || !o.targets.empty()) {
            c = Options();
            c.dbname = t.second;
        }
        std::string ci = build_conninfo(c, "pg_stat_waits_exporter");
        if (ci.find("connect_timeout=") == std::string::npos) ci += " connect_timeout='5'";
        targets_.push_back(std::make_unique<Target>(t.first, ci, o.top_n, o.histogram_events, o.slow_interval_s));
    }

    std::vector<ServeTarget> serve;
    for (auto &t : targets_) {
        Target *p = t.get();
        serve.push_back({p->name(), p->conninfo(), p->top_n(), [p] { return p->collect(); }});
    }
    int rc = serve_http(o.listen, web, tls_ctx, std::move(serve));
    targets_.clear();
    if (tls_ctx) free_tls_context(tls_ctx);
    return rc;
}

}  // namespace psw_report
