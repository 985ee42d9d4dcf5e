#include "pg_data.h"
#include "top_screen.h"

#include <libpq-fe.h>

#include <functional>
#include <cstdlib>
#include <map>
#include <pqxx/pqxx>

#include "duration.h"
#include "pg_util.h"

namespace psw_report {

namespace {

std::string quote_value(const std::string &v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

bool looks_like_conninfo(const std::string &s) {
    return s.find('=') != std::string::npos || s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0;
}

pqxx::result run(pqxx::connection &c, const std::string &sql) { return run_sql(c, sql); }

// Fills `av` for a section needing `object`; returns whether to read it.
bool want(const Server &s, Availability &av, const std::string &object) {
    av.available = s.has(object);
    if (!av.available) av.missing_object = object;
    return av.available;
}

}  // namespace

struct Server::Conn {
    explicit Conn(const std::string &ci) : c(ci) {}
    pqxx::connection c;
};

std::string extension_members_sql(const std::string &quoted_oid) {
    return "SELECT coalesce(c.relname, p.proname) FROM pg_depend d "
           "LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid "
           "LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid "
           "WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = " +
           quoted_oid + "::oid AND d.deptype = 'e'";
}

std::string build_conninfo(const Options &o, const std::string &application_name) {
    std::map<std::string, std::string> kv;
    if (!o.dbname.empty()) {
        if (looks_like_conninfo(o.dbname)) {
            char *err = nullptr;
            PQconninfoOption *opts = PQconninfoParse(o.dbname.c_str(), &err);
            if (!opts) {
                std::string m = err ? err : "invalid connection string";
                if (err) PQfreemem(err);
                throw FatalError("invalid connection string in -d", first_line(m));
            }
            for (PQconninfoOption *p = opts; p->keyword; p++)
                if (p->val && *p->val) kv[p->keyword] = p->val;
            PQconninfoFree(opts);
        } else {
            kv["dbname"] = o.dbname;
        }
    }
    if (!o.host.empty()) kv["host"] = o.host;
    if (!o.port.empty()) kv["port"] = o.port;
    if (!o.user.empty()) kv["user"] = o.user;
    kv["fallback_application_name"] = application_name;
    std::string s;
    for (const auto &e : kv) s += (s.empty() ? "" : " ") + e.first + "=" + quote_value(e.second);
    return s;
}

Server::Server(const Options &o) {
    std::string ci = build_conninfo(o);
    try {
        holder_ = std::make_unique<Conn>(ci);
    } catch (const std::exception &e) {
        throw FatalError("cannot connect to the server", first_line(e.what()));
    }
    pqxx::connection *conn_ = &holder_->c;
    label_ = std::string(conn_->hostname() ? conn_->hostname() : "") + ":" + (conn_->port() ? conn_->port() : "") +
             "/" + (conn_->dbname() ? conn_->dbname() : "");
    try {
        pqxx::result ext = run(*conn_,
                               "SELECT n.nspname, e.oid::text FROM pg_extension e JOIN pg_namespace n ON "
                               "n.oid = e.extnamespace WHERE e.extname = 'pg_stat_waits'");
        if (ext.empty()) {
            pqxx::result pre = run(*conn_, "SELECT current_setting('shared_preload_libraries'), current_database()");
            std::string libs = str(pre[0][0]);
            std::string msg = "the pg_stat_waits extension is not installed in database \"" + str(pre[0][1]) +
                              "\" on " + label_ + ": run CREATE EXTENSION pg_stat_waits there";
            if (libs.find("pg_stat_waits") == std::string::npos)
                msg += " (first add pg_stat_waits to shared_preload_libraries and restart the server)";
            throw FatalError(msg);
        }
        schema_ = str(ext[0][0]);
        pqxx::result objs = run(*conn_, extension_members_sql(conn_->quote(str(ext[0][1]))));
        for (const auto &row : objs)
            if (!row[0].is_null()) objects_.insert(row[0].c_str());
        pqxx::result pgss = run(*conn_,
                                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = "
                                "e.extnamespace WHERE e.extname = 'pg_stat_statements'");
        if (!pgss.empty()) pgss_schema_ = str(pgss[0][0]);
        // The library must be loaded for any view to work: fail early and clearly.
        run(*conn_, "SELECT 1 FROM " + qualified("pg_stat_waits_status"));
    } catch (const FatalError &) {
        throw;
    } catch (const std::exception &e) {
        throw FatalError("pg_stat_waits is installed but not usable on " + label_, first_line(e.what()));
    }
}

Server::~Server() = default;

pqxx::connection &Server::conn() { return holder_->c; }

std::string Server::qualified(const std::string &object) const {
    return holder_->c.quote_name(schema_) + "." + holder_->c.quote_name(object);
}

ReportData Server::read_report(const Options &o) {
    ReportData d;
    d.since_s = o.since_s;
    d.bucket_s = o.bucket_s > 0 ? o.bucket_s : auto_bucket(o.since_s);
    d.server = label_;
    pqxx::connection &c = holder_->c;
    const std::string since = c.quote(interval_literal(o.since_s)) + "::interval";
    const std::string n = std::to_string(o.top_n);
    {
        pqxx::result m = run(c,
                             "SELECT current_setting('server_version'), now()::text, extract(epoch FROM now())::float8, "
                             "extract(timezone FROM now())::float8, current_setting('TimeZone')");
        d.server_version = "PostgreSQL " + str(m[0][0]);
        d.generated_at = str(m[0][1]);
        d.now_epoch = dbl(m[0][2]);
        d.utc_offset_s = dbl(m[0][3]);
        d.timezone = str(m[0][4]);
    }
    auto guard = [](Availability &av, const std::function<void()> &body) {
        try {
            body();
        } catch (const std::exception &e) {
            av.error = first_line(e.what());
        }
    };

    if (want(*this, d.status_av, "pg_stat_waits_status"))
        guard(d.status_av, [&] {
            pqxx::result r = run(c, "SELECT * FROM " + qualified("pg_stat_waits_status"));
            if (r.empty()) return;
            for (pqxx::row::size_type i = 0; i < r.columns(); i++) {
                std::string name = r.column_name(i);
                d.status.emplace_back(name, str(r[0][i]));
                if (name == "timing") d.timing_on = str(r[0][i]) == "t";
                if (name == "stats_reset") d.profile_since = str(r[0][i]);
                if (name == "cpu_count") d.cpu_count = str(r[0][i]);
            }
        });

    if (want(*this, d.sessions_av, "pg_stat_waits_activity"))
        guard(d.sessions_av, [&] {
            pqxx::result r = run(c, "SELECT wait_event_type, wait_event, count(*) FILTER (WHERE pid <> pg_backend_pid() "
                                    "AND coalesce(state, '') <> 'idle' AND wait_event_type IS DISTINCT FROM 'Activity' "
                                    "AND (backend_type = 'client backend' OR coalesce(state, '') <> '' OR wait_event_type IN "
                                    "('CPU', 'IO', 'Lock', 'LWLock'))), sum(count(*)) OVER () FROM " +
                                        qualified("pg_stat_waits_activity") + " GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2");
            for (const auto &row : r) {
                d.processes = static_cast<int>(i64(row[3]));
                if (i64(row[2]) > 0) d.sessions_now.push_back({str(row[0]), str(row[1]), i64(row[2]), 0});
            }
        });

    read_load(o, d);

    if (want(*this, d.top_av, "pg_stat_waits_top"))
        guard(d.top_av, [&] {
            pqxx::result r = run(c, "SELECT wait_event_type, wait_event, samples, pct FROM " +
                                        qualified("pg_stat_waits_top") + "(" + since + ", " + n + ")");
            for (const auto &row : r) d.top.push_back({str(row[0]), str(row[1]), i64(row[2]), dbl(row[3])});
        });

    if (want(*this, d.exact_av, "pg_stat_waits"))
        guard(d.exact_av, [&] {
            // One row per backend type and event: the same event in two process
            // types (18's io workers and client backends) reads as two rows
            // that say so. Idle main-loop waits (Activity) are summed apart.
            pqxx::result r = run(c, "SELECT wait_event_type, wait_event, calls, total_time, mean_time, max_time, "
                                    "coalesce(to_jsonb(w) ->> 'backend_type', '') FROM " +
                                        qualified("pg_stat_waits") + " w WHERE calls > 0 ORDER BY 4 DESC");
            for (const auto &row : r) {
                if (str(row[0]) == "Activity") {
                    d.exact_idle_ms += dbl(row[3]);
                    continue;
                }
                if (d.exact.size() < static_cast<size_t>(o.top_n))
                    d.exact.push_back({str(row[0]), str(row[1]), str(row[6]), i64(row[2]), dbl(row[3]), dbl(row[4]),
                                       dbl(row[5])});
            }
        });

    // Query breakdowns: the n queries with most samples (or wait time), each
    // with all its (type, event) cells, largest first.
    auto read_queries = [&](const std::string &source, const std::string &value, std::vector<QueryRow> &out) {
        pqxx::result r = run(c, "WITH p AS (SELECT queryid, wait_event_type, wait_event, sum(" + value +
                                    ")::float8 AS v FROM " + source +
                                    " WHERE queryid IS NOT NULL AND queryid <> 0 GROUP BY 1, 2, 3), "
                                    "t AS (SELECT queryid, sum(v) AS total FROM p GROUP BY 1 ORDER BY 2 DESC LIMIT " +
                                    n +
                                    ") SELECT t.queryid::text, t.total, p.wait_event_type, p.wait_event, p.v "
                                    "FROM t JOIN p USING (queryid) ORDER BY t.total DESC, t.queryid, p.v DESC");
        for (const auto &row : r) {
            if (out.empty() || out.back().queryid != str(row[0])) out.push_back({str(row[0]), "", dbl(row[1]), {}});
            out.back().breakdown.push_back({str(row[2]), str(row[3]), dbl(row[4])});
        }
        if (pgss_schema_.empty() || out.empty()) return;
        std::string ids;
        for (const auto &q : out) ids += (ids.empty() ? "" : ",") + q.queryid;
        try {
            pqxx::result t = run(c, "SELECT queryid::text, min(query) FROM " + c.quote_name(pgss_schema_) +
                                        ".pg_stat_statements WHERE queryid IN (" + ids + ") GROUP BY 1");
            std::map<std::string, std::string> text;
            for (const auto &row : t) text[str(row[0])] = str(row[1]);
            for (auto &q : out) q.query_text = text[q.queryid];
        } catch (const std::exception &) {
            // pg_stat_statements installed but not preloaded: ids only.
        }
    };
    if (want(*this, d.sampled_queries_av, "pg_stat_waits_profile"))
        guard(d.sampled_queries_av, [&] { read_queries(qualified("pg_stat_waits_profile"), "samples", d.sampled_queries); });
    if (want(*this, d.exact_queries_av, "pg_stat_waits_queries"))
        guard(d.exact_queries_av, [&] { read_queries(qualified("pg_stat_waits_queries"), "total_time", d.exact_queries); });

    if (want(*this, d.slow_runs_av, "pg_stat_waits_executions"))
        guard(d.slow_runs_av, [&] {
            // waits and blockers are jsonb; flattened here into one text
            // each (unit and record separators) so no JSON parser is needed.
            pqxx::result r = run(
                c, "SELECT started::text, pid, coalesce(queryid::text, ''), coalesce(query, ''), elapsed, cpu, "
                   "(SELECT string_agg(concat_ws(chr(31), w->>'wait_event_type', w->>'wait_event', w->>'time_ms'), "
                   "chr(30)) FROM jsonb_array_elements(waits) w), "
                   "(SELECT string_agg(concat('pid ', b->>'pid', ' (', coalesce(b->>'state', '?'), ', ', "
                   "b->>'wait_event_type', ':', b->>'wait_event', coalesce(', queryid ' || (b->>'queryid'), ''), ')'), "
                   "chr(30)) FROM jsonb_array_elements(blockers) b WHERE b ? 'pid') FROM " +
                       qualified("pg_stat_waits_executions") +
                       (o.queryid.empty() ? std::string() : " WHERE queryid = " + c.quote(o.queryid) + "::bigint") +
                       " ORDER BY elapsed DESC LIMIT " + n);
            auto split = [](const std::string &s, char sep) {
                std::vector<std::string> out;
                if (s.empty()) return out;
                size_t from = 0;
                for (;;) {
                    size_t at = s.find(sep, from);
                    out.push_back(s.substr(from, at == std::string::npos ? std::string::npos : at - from));
                    if (at == std::string::npos) return out;
                    from = at + 1;
                }
            };
            for (const auto &row : r) {
                SlowRun run_;
                run_.started = str(row[0]);
                run_.pid = static_cast<int>(i64(row[1]));
                run_.queryid = str(row[2]);
                run_.query = str(row[3]);
                run_.elapsed_ms = dbl(row[4]);
                run_.cpu_ms = dbl(row[5]);
                for (const auto &w : split(str(row[6]), '\x1e')) {
                    std::vector<std::string> f = split(w, '\x1f');
                    if (f.size() == 3) run_.parts.push_back({f[0], f[1], std::strtod(f[2].c_str(), nullptr)});
                }
                run_.parts.push_back({"CPU", "CPU", run_.cpu_ms});
                run_.blockers = split(str(row[7]), '\x1e');
                d.slow_runs.push_back(std::move(run_));
            }
        });

    if (want(*this, d.histogram_av, "pg_stat_waits_histogram"))
        guard(d.histogram_av, [&] {
            // The events that cost most in exact timing; idle main loops
            // (Activity) would only show that background processes sleep.
            std::vector<std::pair<std::string, std::string>> events;
            if (has("pg_stat_waits")) {
                pqxx::result r = run(c, "SELECT wait_event_type, wait_event FROM " + qualified("pg_stat_waits") +
                                            " WHERE calls > 0 AND wait_event_type <> 'Activity' "
                                            "GROUP BY 1, 2 ORDER BY sum(total_time) DESC LIMIT 6");
                for (const auto &row : r) events.emplace_back(str(row[0]), str(row[1]));
            }
            for (const auto &ev : events) {
                Histogram h{ev.first, ev.second, {}};
                pqxx::result r = run(c, "SELECT lower_ms, upper_ms, count FROM " + qualified("pg_stat_waits_histogram") +
                                            "(" + c.quote(ev.first) + ", " + c.quote(ev.second) + ") ORDER BY lower_ms");
                for (const auto &row : r) h.buckets.push_back({dbl(row[0]), dbl(row[1]), i64(row[2])});
                d.histograms.push_back(std::move(h));
            }
        });
    return d;
}

TopSnapshot Server::read_top() {
    TopSnapshot s;
    s.server = label_;
    pqxx::connection &c = holder_->c;
    pqxx::result now = run(c, "SELECT to_char(now(), 'YYYY-MM-DD HH24:MI:SS TZ')");
    s.clock = str(now[0][0]);
    pqxx::result st = run(c, "SELECT sampler_pid, sample_period_ms, samples_taken, history_used, history_size, timing "
                             "FROM " + qualified("pg_stat_waits_status"));
    if (!st.empty()) {
        const auto &r = st[0];
        s.status_line = r[0].is_null() ? std::string("sampler NOT running")
                                        : "sampler pid " + str(r[0]) + ", every " + str(r[1]) + " ms";
        s.status_line += ", " + str(r[2]) + " samples, history " + str(r[3]) + "/" + str(r[4]) + ", timing " +
                         (str(r[5]) == "t" ? "on" : "off");
    }
    // RUNNING is measured against clock_timestamp(): now() is this
    // statement's transaction start, earlier than a statement that began
    // while it ran (that showed as -0.0s).
    pqxx::result a = run(
        c, "SELECT a.pid, a.backend_type, coalesce(a.state, ''), a.wait_event_type, a.wait_event, a.wait_time, "
           "a.queryid::text, extract(epoch FROM clock_timestamp() - a.query_start)::float8, "
           "coalesce(left(s.query, 300), ''), count(*) OVER (), "
           // blockers is new in 1.1: read through jsonb so that 1.0 answers NULL
           "translate(to_jsonb(a) ->> 'blockers', '[] ', '') "
           "FROM " + qualified("pg_stat_waits_activity") + " a LEFT JOIN pg_stat_activity s ON s.pid = a.pid "
           "ORDER BY a.query_start NULLS LAST, a.pid");
    const int self = c.backendpid();
    for (const auto &row : a) {
        s.total_processes = static_cast<int>(i64(row[9]));
        Session x;
        x.pid = row[0].as<int>();
        x.backend_type = str(row[1]);
        x.state = str(row[2]);
        x.wait_event_type = str(row[3]);
        x.wait_event = str(row[4]);
        // Sessions now = not idle; background processes count only when they
        // are doing something (not in their idle main-loop wait).
        if (x.pid == self || x.state == "idle" || x.wait_event_type == "Activity") continue;
        if (x.backend_type != "client backend" && x.state.empty() && x.wait_event_type != "CPU" &&
            x.wait_event_type != "IO" && x.wait_event_type != "Lock" && x.wait_event_type != "LWLock")
            continue;
        if (!row[5].is_null()) x.wait_ms = dbl(row[5]);
        x.queryid = str(row[6]);
        if (!row[7].is_null()) x.running_s = dbl(row[7]);
        x.query = str(row[8]);
        x.blockers = parse_pid_list(str(row[10]));
        s.sessions.push_back(std::move(x));
    }
    s.top_av.available = has("pg_stat_waits_top");
    if (!s.top_av.available) {
        s.top_av.missing_object = "pg_stat_waits_top";
    } else {
        try {
            pqxx::result t = run(c, "SELECT wait_event_type, wait_event, samples, pct FROM " +
                                        qualified("pg_stat_waits_top") + "('1 minute'::interval, 10)");
            for (const auto &row : t) s.last_minute.push_back({str(row[0]), str(row[1]), i64(row[2]), dbl(row[3])});
        } catch (const std::exception &e) {
            s.top_av.error = first_line(e.what());
        }
    }
    return s;
}

}  // namespace psw_report
