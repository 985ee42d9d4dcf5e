#include "load_model.h"

#include "wait_series.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace psw_report {

namespace {

struct SliceName {
    Slice slice;
    const char *param;
    const char *title;
};
const SliceName kSlices[] = {
    {Slice::WaitClass, "class", "wait class"}, {Slice::WaitEvent, "event", "wait event"},
    {Slice::Sql, "sql", "SQL"},                {Slice::User, "user", "user"},
    {Slice::Database, "database", "database"}, {Slice::BackendType, "backend", "backend type"},
};

const SliceName &slice_entry(Slice s) {
    for (const auto &e : kSlices)
        if (e.slice == s) return e;
    return kSlices[0];
}

std::string or_none(const std::string &v, const char *none) { return v.empty() ? none : v; }

std::string slice_key(const SampleCell &c, Slice s) {
    switch (s) {
        case Slice::WaitClass: return c.wait_event_type;
        case Slice::WaitEvent: return c.wait_event_type + ":" + c.wait_event;
        case Slice::Sql: return c.queryid.empty() || c.queryid == "0" ? "(no statement)" : c.queryid;
        case Slice::User: return or_none(c.user, "(no user)");
        case Slice::Database: return or_none(c.database, "(no database)");
        case Slice::BackendType: return or_none(c.backend_type, "(unknown)");
    }
    return c.wait_event_type;
}

// Session-seconds a sample stands for, spread over `seconds` of wall time.
double sessions(double samples, const SampleSet &set, double seconds) {
    return seconds > 0 ? samples * set.period_s / seconds : 0;
}

void sort_waits(std::vector<QueryWait> &w) {
    std::sort(w.begin(), w.end(), [](const QueryWait &a, const QueryWait &b) {
        if (a.value != b.value) return a.value > b.value;
        return a.wait_event_type + a.wait_event < b.wait_event_type + b.wait_event;
    });
}

bool has_statement(const SampleCell &c) { return !c.queryid.empty() && c.queryid != "0"; }

// Active load per key (wait event or statement) over the covered window.
std::map<std::string, std::pair<std::string, double>> load_by(const SampleSet &set, bool by_sql) {
    std::map<std::string, std::pair<std::string, double>> out;
    for (const auto &c : set.cells) {
        if (c.kind != SampleKind::Active || (by_sql && !has_statement(c))) continue;
        auto &e = out[by_sql ? c.queryid : c.wait_event_type + ":" + c.wait_event];
        e.first = by_sql ? "" : c.wait_event_type;
        e.second += static_cast<double>(c.samples);
    }
    for (auto &kv : out) kv.second.second = sessions(kv.second.second, set, set.covered.seconds());
    return out;
}

// Under which names a window has each rename's waits (wait_series.h): per
// release that renamed, bit 1 for its new names, bit 2 for the old ones.
std::map<int, int> naming(const std::map<std::string, std::pair<std::string, double>> &by_wait) {
    std::map<int, int> m;
    for (const auto &kv : by_wait) {
        const std::string &type = kv.second.first;
        if (const RenamedWait *r = find_renamed_wait(type, kv.first.substr(type.size() + 1)))
            m[r->renamed_in] |= r->new_name ? 1 : 2;
    }
    return m;
}

// The renames the two windows stand on different sides of (a server upgraded
// between them, or two servers of different releases).
std::map<int, bool> renames_between(const std::map<int, int> &a, const std::map<int, int> &b) {
    std::map<int, bool> out;
    for (const auto &r : renamed_waits()) {
        auto ia = a.find(r.renamed_in), ib = b.find(r.renamed_in);
        int na = ia == a.end() ? 0 : ia->second, nb = ib == b.end() ? 0 : ib->second;
        out[r.renamed_in] = (na | nb) == 3 && na != nb;
    }
    return out;
}

// The waits of those renames are compared as one row per series, keyed
// "IO:WalSync (any release)" or "Buffer:content lock (any release)".
void merge_renamed(std::map<std::string, std::pair<std::string, double>> &by_wait, const std::map<int, bool> &merge) {
    std::map<std::string, std::pair<std::string, double>> out;
    for (const auto &kv : by_wait) {
        const std::string &type = kv.second.first;
        const RenamedWait *r = find_renamed_wait(type, kv.first.substr(type.size() + 1));
        if (r == nullptr || !merge.at(r->renamed_in)) {
            out[kv.first] = kv.second;
            continue;
        }
        auto &e = out[r->merged_key];
        e.first = r->merged_type;
        e.second += kv.second.second;
    }
    by_wait.swap(out);
}

std::vector<CompareRow> compare(const SampleSet &cur, const SampleSet &base, size_t n, bool by_sql) {
    auto a = load_by(cur, by_sql), b = load_by(base, by_sql);
    if (!by_sql) {
        std::map<int, bool> merge = renames_between(naming(a), naming(b));
        merge_renamed(a, merge);
        merge_renamed(b, merge);
    }
    std::map<std::string, CompareRow> rows;
    for (const auto &kv : a) rows[kv.first] = {kv.first, kv.second.first, kv.second.second, 0};
    for (const auto &kv : b) {
        auto &r = rows[kv.first];
        r.key = kv.first;
        r.wait_event_type = kv.second.first;
        r.baseline = kv.second.second;
    }
    std::vector<CompareRow> out;
    for (auto &kv : rows) out.push_back(kv.second);
    std::sort(out.begin(), out.end(), [](const CompareRow &x, const CompareRow &y) {
        if (std::fabs(x.delta()) != std::fabs(y.delta())) return std::fabs(x.delta()) > std::fabs(y.delta());
        return x.key < y.key;
    });
    if (out.size() > n) out.resize(n);
    return out;
}

}  // namespace

const std::vector<Slice> &all_slices() {
    static const std::vector<Slice> v = {Slice::WaitClass, Slice::WaitEvent, Slice::Sql,
                                         Slice::User,      Slice::Database,  Slice::BackendType};
    return v;
}
const char *slice_param(Slice s) { return slice_entry(s).param; }
const char *slice_title(Slice s) { return slice_entry(s).title; }
std::optional<Slice> parse_slice(const std::string &text) {
    for (const auto &e : kSlices)
        if (text == e.param) return e.slice;
    return std::nullopt;
}

LoadChart build_load_chart(const SampleSet &set, Slice slice, double bucket_s, size_t max_keys) {
    LoadChart ch;
    ch.bucket_s = bucket_s > 0 ? bucket_s : 60;
    ch.slice = slice;
    if (set.by_wait_only && slice != Slice::WaitClass && slice != Slice::WaitEvent) {
        ch.slice = Slice::WaitClass;
        ch.sliced_as_asked = false;
    }
    std::map<std::string, double> totals;
    std::map<std::pair<double, std::string>, double> cells;
    double idle_tx = 0, idle_bg = 0;
    for (const auto &c : set.cells) {
        if (c.kind == SampleKind::IdleInTransaction) idle_tx += static_cast<double>(c.samples);
        if (c.kind == SampleKind::IdleBackground) idle_bg += static_cast<double>(c.samples);
        if (c.kind != SampleKind::Active) continue;
        std::string key = slice_key(c, ch.slice);
        totals[key] += static_cast<double>(c.samples);
        double b = std::floor(c.bucket_start / ch.bucket_s + 1e-9) * ch.bucket_s;
        cells[{b, key}] += static_cast<double>(c.samples);
    }
    std::vector<std::pair<std::string, double>> ranked(totals.begin(), totals.end());
    std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::map<std::string, std::string> shown;  // key -> band
    for (size_t i = 0; i < ranked.size(); i++) {
        bool own = i + 1 < max_keys || ranked.size() <= max_keys;
        shown[ranked[i].first] = own ? ranked[i].first : "other";
        if (own) ch.keys.push_back(ranked[i].first);
    }
    if (ranked.size() > max_keys) ch.keys.push_back("other");
    std::map<std::pair<double, std::string>, double> bands;
    for (const auto &kv : cells) bands[{kv.first.first, shown[kv.first.second]}] += kv.second;
    for (const auto &kv : bands) {
        double b = kv.first.first;
        // The part of this bucket the window covers: the bucket still filling
        // counts only up to the window's end.
        double covered = std::min(b + ch.bucket_s, set.covered.to) - std::max(b, set.covered.from);
        if (covered <= 0) continue;
        // A bucket a moment old holds whole samples: at least one period.
        covered = std::min(std::max(covered, set.period_s), ch.bucket_s);
        ch.points.push_back({b, kv.first.second, sessions(kv.second, set, covered)});
    }
    double active = 0;
    for (const auto &kv : totals) active += kv.second;
    ch.avg_load = sessions(active, set, set.covered.seconds());
    ch.idle_in_transaction = sessions(idle_tx, set, set.covered.seconds());
    ch.idle_background = sessions(idle_bg, set, set.covered.seconds());
    return ch;
}

std::vector<TopSql> build_top_sql(const SampleSet &set, size_t n) {
    std::map<std::string, TopSql> by_id;
    std::map<std::string, std::map<std::pair<std::string, std::string>, double>> waits;
    for (const auto &c : set.cells) {
        if (!has_statement(c) || c.kind == SampleKind::IdleBackground) continue;
        TopSql &q = by_id[c.queryid];
        q.queryid = c.queryid;
        if (c.kind == SampleKind::IdleInTransaction) {
            q.idle_in_transaction += static_cast<double>(c.samples);
        } else {
            q.samples += c.samples;
            q.load += static_cast<double>(c.samples);
            waits[c.queryid][{c.wait_event_type, c.wait_event}] += static_cast<double>(c.samples);
        }
    }
    const double secs = set.covered.seconds();
    std::vector<TopSql> out;
    for (auto &kv : by_id) {
        TopSql q = kv.second;
        q.load = sessions(q.load, set, secs);
        q.idle_in_transaction = sessions(q.idle_in_transaction, set, secs);
        for (const auto &w : waits[kv.first]) q.waits.push_back({w.first.first, w.first.second, sessions(w.second, set, secs)});
        sort_waits(q.waits);
        out.push_back(std::move(q));
    }
    std::sort(out.begin(), out.end(), [](const TopSql &a, const TopSql &b) {
        if (a.load != b.load) return a.load > b.load;
        if (a.idle_in_transaction != b.idle_in_transaction) return a.idle_in_transaction > b.idle_in_transaction;
        return a.queryid < b.queryid;
    });
    if (out.size() > n) out.resize(n);
    return out;
}

double type_share(const std::vector<QueryWait> &parts, const std::string &type) {
    double total = 0, part = 0;
    for (const auto &p : parts) {
        total += p.value;
        if (p.wait_event_type == type) part += p.value;
    }
    return total > 0 ? part / total * 100 : 0;
}

std::vector<CompareRow> compare_by_wait(const SampleSet &current, const SampleSet &baseline, size_t n) {
    return compare(current, baseline, n, false);
}

std::vector<CompareRow> compare_by_sql(const SampleSet &current, const SampleSet &baseline, size_t n) {
    return compare(current, baseline, n, true);
}

}  // namespace psw_report
