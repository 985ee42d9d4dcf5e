// Reading a window of samples for the load chart, top SQL, blocking
// sessions and the comparison (load_model.h): the raw history ring when it
// reaches back to the window's start (every dimension), else the server's
// minute buckets through pg_stat_waits_timeline (wait events only).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "duration.h"
#include "load_model.h"
#include "pg_data.h"
#include "pg_util.h"

namespace psw_report {

namespace {

std::string epoch_sql(double t) {
    char b[64];
    std::snprintf(b, sizeof b, "to_timestamp(%.6f)", t);
    return b;
}

bool is_number(const std::string &s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return false;
    return true;
}

std::string in_list(const std::vector<std::string> &ids) {
    std::string s;
    for (const auto &id : ids) s += (s.empty() ? "" : ",") + id;
    return s;
}

}  // namespace

// A timestamp as the user wrote it (epoch seconds, or any text PostgreSQL
// reads as timestamptz, in the server's time zone) in epoch seconds.
double Server::epoch_of(const std::string &text) {
    pqxx::connection &c = conn();
    std::string expr = is_number(text) ? "to_timestamp(" + text + ")" : c.quote(text) + "::timestamptz";
    try {
        return dbl(run_sql(c, "SELECT extract(epoch FROM " + expr + ")::float8")[0][0]);
    } catch (const std::exception &e) {
        throw InputError("invalid time \"" + text + "\"", first_line(e.what()));
    }
}

SampleSet Server::read_samples(const Window &w, double bucket_s, bool history_only) {
    pqxx::connection &c = conn();
    SampleSet set;
    set.covered = w;
    pqxx::result st = run_sql(
        c,
        "SELECT sample_period_ms, history_used, history_size, extract(epoch FROM pg_postmaster_start_time())::float8, "
        "extract(epoch FROM stats_reset)::float8, extract(epoch FROM now())::float8 FROM " +
            qualified("pg_stat_waits_status"));
    if (st.empty()) throw FatalError("pg_stat_waits_status returned no row");
    if (dbl(st[0][0]) > 0) set.period_s = dbl(st[0][0]) / 1000.0;
    const bool wrapped = i64(st[0][1]) >= i64(st[0][2]);
    // Before the statistics were reset (or first kept) nothing was counted,
    // and the history ring starts empty with the server: that time is not
    // load 0.
    const double reset = dbl(st[0][4]);
    set.covered.from = std::max({set.covered.from, dbl(st[0][3]), reset});
    // A window reaching into the future (--to later than now) has data up
    // to now: the bucket still filling is averaged over its elapsed time.
    set.covered.to = std::min(set.covered.to, dbl(st[0][5]));
    double oldest = -1;
    if (wrapped) oldest = dbl(run_sql(c, "SELECT extract(epoch FROM min(sample_time))::float8 FROM " +
                                             qualified("pg_stat_waits_history"))[0][0]);
    const std::string b = std::to_string(bucket_s > 0 ? bucket_s : 60);
    if (!wrapped || oldest <= set.covered.from + set.period_s || history_only) {
        // history_only: the part of the window the ring still holds.
        if (wrapped) set.covered.from = std::max(set.covered.from, oldest);
        pqxx::result r = run_sql(
            c, "SELECT floor(extract(epoch FROM h.sample_time) / " + b + ") * " + b +
                   ", coalesce(h.backend_type, ''), coalesce(d.datname, ''), coalesce(r.rolname, ''), "
                   "coalesce(h.queryid, 0)::text, coalesce(h.wait_event_type, ''), coalesce(h.wait_event, ''), "
                   // Background processes sleeping (their main loop, or a
                   // throttling delay such as the checkpointer's) are idle.
                   "CASE WHEN h.wait_event_type = 'Activity' OR (h.wait_event_type = 'Timeout' AND "
                   "h.backend_type IS DISTINCT FROM 'client backend') THEN 2 "
                   "WHEN h.state LIKE 'idle in transaction%' THEN 1 ELSE 0 END, count(*) FROM " + qualified("pg_stat_waits_history") +
                   " h LEFT JOIN pg_database d ON d.oid = h.datid LEFT JOIN pg_roles r ON r.oid = h.usesysid "
                   "WHERE h.sample_time >= " + epoch_sql(w.from) + " AND h.sample_time < " + epoch_sql(w.to) +
                   " AND h.state IS DISTINCT FROM 'idle' GROUP BY 1, 2, 3, 4, 5, 6, 7, 8");
        for (const auto &row : r)
            set.cells.push_back({dbl(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]),
                                 str(row[6]), static_cast<SampleKind>(i64(row[7])), i64(row[8])});
        return set;
    }
    // Older than the ring: whole minutes from the minute buckets, which
    // outlive a restart: the window is cut at the statistics' reset, not the server's start.
    set.by_wait_only = true;
    double bucket = std::max(60.0, std::ceil((bucket_s > 0 ? bucket_s : 60) / 60) * 60);
    set.covered.from = std::floor(std::max(w.from, reset) / 60) * 60;
    pqxx::result now = run_sql(c, "SELECT extract(epoch FROM now())::float8");
    double since = dbl(now[0][0]) - set.covered.from;
    pqxx::result r = run_sql(c, "SELECT extract(epoch FROM bucket_start)::float8, wait_event_type, wait_event, samples "
                                "FROM " + qualified("pg_stat_waits_timeline") + "(" +
                                    c.quote(interval_literal(since)) + "::interval, " +
                                    c.quote(interval_literal(bucket)) + "::interval)");
    for (const auto &row : r) {
        if (dbl(row[0]) >= w.to) continue;
        SampleCell cell;
        cell.bucket_start = dbl(row[0]);
        cell.wait_event_type = str(row[1]);
        cell.wait_event = str(row[2]);
        cell.kind = cell.wait_event_type == "Activity" ? SampleKind::IdleBackground : SampleKind::Active;
        cell.samples = i64(row[3]);
        set.cells.push_back(std::move(cell));
    }
    return set;
}

void Server::read_blocking(LoadSections &ls, int n) {
    pqxx::connection &c = conn();
    double period = 0.01;
    pqxx::result st = run_sql(c, "SELECT sample_period_ms FROM " + qualified("pg_stat_waits_status"));
    if (!st.empty() && dbl(st[0][0]) > 0) period = dbl(st[0][0]) / 1000.0;
    pqxx::result r = run_sql(
        // The blocker's state, wait and statement as last seen (one moment,
        // not a mix of several).
        c, "SELECT (b->>'pid')::int, (array_agg(b->>'state' ORDER BY h.sample_time DESC))[1], "
           "(array_agg(concat(b->>'wait_event_type', ':', b->>'wait_event') ORDER BY h.sample_time DESC))[1], "
           "coalesce((array_agg(b->>'queryid' ORDER BY h.sample_time DESC))[1], ''), count(*), count(DISTINCT h.pid), "
           "extract(epoch FROM min(h.sample_time))::float8, extract(epoch FROM max(h.sample_time))::float8, "
           "coalesce(string_agg(DISTINCT h.queryid::text, ','), '') FROM " + qualified("pg_stat_waits_history") +
           " h, jsonb_array_elements(h.blocker_details) b WHERE h.blocker_details IS NOT NULL AND h.sample_time >= " +
           epoch_sql(ls.window.from) + " AND h.sample_time < " + epoch_sql(ls.window.to) +
           " AND b ? 'pid' GROUP BY 1 ORDER BY 5 DESC, 1 LIMIT " + std::to_string(n));
    for (const auto &row : r) {
        BlockingSession s;
        s.pid = static_cast<int>(i64(row[0]));
        s.state = str(row[1]);
        s.wait = str(row[2]);
        s.queryid = str(row[3]);
        s.blocked_s = static_cast<double>(i64(row[4])) * period;
        s.waiters = i64(row[5]);
        s.first = dbl(row[6]);
        s.last = dbl(row[7]);
        std::string ids = str(row[8]);
        for (size_t from = 0; !ids.empty() && from <= ids.size();) {
            size_t at = ids.find(',', from);
            std::string id = ids.substr(from, at == std::string::npos ? std::string::npos : at - from);
            if (!id.empty() && id != "0") s.blocked_queryids.push_back(id);
            if (at == std::string::npos) break;
            from = at + 1;
        }
        ls.blocking.push_back(std::move(s));
    }
}

// Full texts (pg_stat_statements), calls and means, exact times and slow
// run counts of the top statements.
void Server::read_statement_details(LoadSections &ls) {
    pqxx::connection &c = conn();
    std::vector<std::string> ids;
    for (const auto &q : ls.top_sql) ids.push_back(q.queryid);
    for (const auto &r : ls.compare_sql) ids.push_back(r.key);
    for (const auto &b : ls.blocking) {
        if (!b.queryid.empty()) ids.push_back(b.queryid);
        for (const auto &id : b.blocked_queryids) ids.push_back(id);
    }
    if (ids.empty()) return;
    const std::string list = in_list(ids);
    std::map<std::string, TopSql *> top;
    for (auto &q : ls.top_sql) top[q.queryid] = &q;
    if (!pgss_schema().empty()) {
        try {
            pqxx::result t = run_sql(c, "SELECT queryid::text, min(query), sum(calls)::int8, "
                                        "(sum(total_exec_time) / nullif(sum(calls), 0))::float8 FROM " +
                                            c.quote_name(pgss_schema()) + ".pg_stat_statements WHERE queryid IN (" +
                                            list + ") GROUP BY 1");
            for (const auto &row : t) {
                ls.texts[str(row[0])] = str(row[1]);
                auto it = top.find(str(row[0]));
                if (it == top.end()) continue;
                it->second->calls = i64(row[2]);
                if (!row[3].is_null()) it->second->mean_ms = dbl(row[3]);
            }
        } catch (const std::exception &) {
            // pg_stat_statements installed but not preloaded: ids only.
        }
    }
    // A statement still running its first time is not in pg_stat_statements
    // yet; the session running it shows its text.
    std::vector<std::string> missing;
    for (const auto &id : ids)
        if (!ls.texts.count(id)) missing.push_back(id);
    if (!missing.empty()) {
        pqxx::result a = run_sql(c, "SELECT query_id::text, min(query) FROM pg_stat_activity WHERE query_id IN (" +
                                        in_list(missing) + ") GROUP BY 1");
        for (const auto &row : a) ls.texts[str(row[0])] = str(row[1]);
    }
    for (auto &q : ls.top_sql) q.text = ls.texts.count(q.queryid) ? ls.texts[q.queryid] : "";
    if (ls.top_sql.empty()) return;
    std::vector<std::string> top_ids;
    for (const auto &q : ls.top_sql) top_ids.push_back(q.queryid);
    if (has("pg_stat_waits_queries")) {
        pqxx::result r = run_sql(c, "SELECT queryid::text, wait_event_type, wait_event, sum(total_time)::float8 FROM " +
                                        qualified("pg_stat_waits_queries") + " WHERE queryid IN (" + in_list(top_ids) +
                                        ") GROUP BY 1, 2, 3 HAVING sum(total_time) > 0 ORDER BY 4 DESC");
        for (const auto &row : r) {
            TopSql *q = top[str(row[0])];
            q->exact.push_back({str(row[1]), str(row[2]), dbl(row[3])});
            q->exact_ms = q->exact_ms.value_or(0) + dbl(row[3]);
        }
    }
    if (has("pg_stat_waits_executions")) {
        pqxx::result r = run_sql(c, "SELECT queryid::text, count(*) FROM " + qualified("pg_stat_waits_executions") +
                                        " WHERE queryid IN (" + in_list(top_ids) + ") GROUP BY 1");
        for (const auto &row : r) top[str(row[0])]->slow_runs = i64(row[1]);
    }
}

void Server::read_load(const Options &o, ReportData &d) {
    auto ls = std::make_shared<LoadSections>();
    d.load = ls;
    pqxx::connection &c = conn();
    const double now = dbl(run_sql(c, "SELECT extract(epoch FROM now())::float8")[0][0]);
    if (!o.from.empty()) {
        ls->window.from = epoch_of(o.from);
        ls->window.to = o.to.empty() ? now : epoch_of(o.to);
        if (ls->window.to <= ls->window.from) throw InputError("the window ends before it starts (--from/--to)");
        ls->window_label = "from " + o.from + (o.to.empty() ? " to now" : " to " + o.to);
    } else {
        ls->window = {now - o.since_s, now};
        ls->window_label = "last " + format_duration(o.since_s);
    }
    const Slice slice = parse_slice(o.slice).value_or(Slice::WaitClass);
    const double bucket = o.bucket_s > 0 ? o.bucket_s : auto_bucket(ls->window.seconds());
    for (const char *obj : {"pg_stat_waits_history", "pg_stat_waits_status"})
        if (!has(obj)) {
            ls->load_av.missing_object = ls->top_sql_av.missing_object = ls->blocking_av.missing_object = obj;
            return;
        }
    ls->load_av.available = ls->top_sql_av.available = ls->blocking_av.available = true;
    auto guard = [](Availability &av, const std::function<void()> &body) {
        try {
            body();
        } catch (const FatalError &) {
            throw;
        } catch (const std::exception &e) {
            av.error = first_line(e.what());
        }
    };
    SampleSet cur;
    guard(ls->load_av, [&] {
        cur = read_samples(ls->window, bucket);
        ls->chart = build_load_chart(cur, slice, cur.by_wait_only ? std::max(60.0, bucket) : bucket);
        if (cur.by_wait_only)
            ls->note = "This window is older than the raw sample history; it is read from the minute buckets, "
                       "which keep wait events only (no statement, user, database or backend type).";
        if (!d.cpu_count.empty()) ls->chart.cpu_count = std::atof(d.cpu_count.c_str());
    });
    ls->top_sql_av.error = ls->load_av.error;
    if (ls->load_av.error.empty() && cur.by_wait_only) {
        // Statements are only in the raw history: rank those it still holds.
        guard(ls->top_sql_av, [&] {
            SampleSet recent = read_samples(ls->window, bucket, true);
            ls->top_sql = build_top_sql(recent, static_cast<size_t>(o.top_n));
            ls->top_sql_note = "Statements are known only in the raw sample history, which reaches back to " +
                               std::to_string(static_cast<long long>(recent.covered.seconds())) +
                               " s before the window's end: this ranking and the blocking sessions cover that part.";
        });
    } else if (ls->load_av.error.empty()) {
        ls->top_sql = build_top_sql(cur, static_cast<size_t>(o.top_n));
    }
    guard(ls->blocking_av, [&] { read_blocking(*ls, o.top_n); });
    if (!o.compare.empty()) {
        ls->compared = true;
        ls->compare_av.available = true;
        guard(ls->compare_av, [&] {
            Window base;
            size_t dots = o.compare.find("..");
            if (o.compare == "prev") {
                base = {ls->window.from - ls->window.seconds(), ls->window.from};
                ls->baseline_label = "the window just before";
            } else if (dots != std::string::npos) {
                base = {epoch_of(o.compare.substr(0, dots)), epoch_of(o.compare.substr(dots + 2))};
                ls->baseline_label = "from " + o.compare.substr(0, dots) + " to " + o.compare.substr(dots + 2);
            } else if (auto shift = parse_duration(o.compare)) {
                base = {ls->window.from - *shift, ls->window.to - *shift};
                ls->baseline_label = "the same window " + format_duration(*shift) + " earlier";
            } else {
                throw InputError("invalid --compare \"" + o.compare + "\" (a duration such as 1d, prev, or FROM..TO)");
            }
            if (base.to <= base.from) throw InputError("the baseline window ends before it starts (--compare)");
            ls->baseline = base;
            SampleSet b = read_samples(base, base.seconds());
            ls->compare_waits = compare_by_wait(cur, b, static_cast<size_t>(o.top_n));
            ls->compare_sql_available = !cur.by_wait_only && !b.by_wait_only;
            if (ls->compare_sql_available) ls->compare_sql = compare_by_sql(cur, b, static_cast<size_t>(o.top_n));
        });
    }
    guard(ls->top_sql_av, [&] { read_statement_details(*ls); });
    ls->exact_since = d.profile_since;
    ls->queryid_filter = o.queryid;
}

}  // namespace psw_report
