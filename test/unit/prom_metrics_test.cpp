// The exporter's PostgreSQL-free parts: metric names and types, the mapping
// of the extension's log2 buckets to Prometheus `le` buckets, the counter
// guard, the targets file and the serve command line.
#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include <cmath>
#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "cli.h"
#include "prom_metrics.h"
#include "timing_stats.h"

using namespace psw_report;
using namespace psw_report::prom;

namespace {

// What pg_stat_waits_histogram() returns: every bucket of the core's layout.
std::vector<HistogramRow> server_rows(const std::vector<uint64_t> &counts) {
    std::vector<HistogramRow> rows;
    for (int b = 0; b < psw::kHistBuckets; b++) {
        double lo, hi;
        psw::hist_bucket_bounds_ns(b, &lo, &hi);
        rows.push_back({lo / 1e6, std::isinf(hi) ? hi : hi / 1e6, b < (int)counts.size() ? counts[b] : 0});
    }
    return rows;
}

TargetData sample_data() {
    TargetData d;
    d.up = true;
    d.scrape_seconds = 0.01;
    d.connects = 1;
    d.sessions = {{"client backend", "Lock", "transactionid", 2}};
    d.sampled = {{"client backend", "Lock", "transactionid", 300, 3.0}, {"walwriter", "CPU", "CPU", 1, 0.01}};
    d.exact = {{"", "Lock", "transactionid", 3, 2.7, 0.95}};
    std::vector<uint64_t> counts(psw::kHistBuckets, 0);
    counts[psw::hist_bucket(900000000)] = 3;
    d.histograms = {{"Lock", "transactionid", server_rows(counts), 2.7}};
    d.query_sampled = {{"-123", "Lock", 2.9}};
    d.query_exact = {{"-123", "Lock", 2.7}};
    d.sampler_up = 1;
    d.sample_period_seconds = 0.01;
    d.samples_taken = 1000;
    d.sampler_lag_seconds = 0.001;
    d.last_sample_age_seconds = 0.005;
    d.timing_enabled = 1;
    d.interposed_calls = 13;
    d.shmem_bytes = 1e7;
    d.stats_reset_seconds = 1.7e9;
    d.tables = {{"history", 10, 100000}, {"profile", 5, 10000}};
    d.dropped = {{"profile", 0}};
    d.evictions = {{"profile", 4}};
    return d;
}

const prometheus::MetricFamily *find(const std::vector<prometheus::MetricFamily> &fs, const std::string &name) {
    for (const auto &f : fs)
        if (f.name == name) return &f;
    return nullptr;
}

TEST(PromHistogram, LeBoundsAreTheLog2UpperBoundsInSeconds) {
    auto h = to_prometheus_histogram(server_rows({}), 0);
    ASSERT_EQ(h.bucket.size(), static_cast<size_t>(psw::kHistBuckets));
    for (int b = 0; b + 1 < psw::kHistBuckets; b++)
        EXPECT_DOUBLE_EQ(h.bucket[b].upper_bound, 1.024e-6 * std::ldexp(1.0, b)) << b;
    EXPECT_TRUE(std::isinf(h.bucket.back().upper_bound));
}

TEST(PromHistogram, EveryDurationLandsInTheBucketWhoseLeCoversIt) {
    for (uint64_t ns : {1ull, 1023ull, 1024ull, 5000ull, 999999ull, 900000000ull, 1073741823ull, 5000000000ull}) {
        std::vector<uint64_t> counts(psw::kHistBuckets, 0);
        counts[psw::hist_bucket(ns)] = 1;
        auto h = to_prometheus_histogram(server_rows(counts), ns / 1e9);
        // The first cumulative bucket that counts it is the smallest le >= the duration.
        size_t first = 0;
        while (h.bucket[first].cumulative_count == 0) first++;
        EXPECT_GE(h.bucket[first].upper_bound, ns / 1e9) << ns;
        if (first > 0) {
            // [lo, hi) in the extension: a duration equal to a bound counts one bucket up.
            EXPECT_LT(h.bucket[first - 1].upper_bound, ns / 1e9 + 1e-15) << ns;
        }
        EXPECT_EQ(h.sample_count, 1u);
    }
}

TEST(PromHistogram, CumulativeAndInfAdded) {
    std::vector<HistogramRow> rows = {{0, 1, 2}, {1, 2, 3}};  // no open last bucket
    auto h = to_prometheus_histogram(rows, 4.5);
    ASSERT_EQ(h.bucket.size(), 3u);
    EXPECT_EQ(h.bucket[0].cumulative_count, 2u);
    EXPECT_EQ(h.bucket[1].cumulative_count, 5u);
    EXPECT_TRUE(std::isinf(h.bucket[2].upper_bound));
    EXPECT_EQ(h.bucket[2].cumulative_count, 5u);
    EXPECT_EQ(h.sample_count, 5u);
    EXPECT_DOUBLE_EQ(h.sample_sum, 4.5);
}

TEST(PromNames, ConventionsHold) {
    const std::regex valid("[a-zA-Z_:][a-zA-Z0-9_:]*");
    auto fs = build_families("a", sample_data(), nullptr);
    std::set<std::string> listed;
    for (const auto &n : exported_metric_names()) listed.insert(n);
    for (const auto &f : fs) {
        EXPECT_TRUE(std::regex_match(f.name, valid)) << f.name;
        EXPECT_EQ(f.name.rfind(kPrefix, 0), 0u) << f.name;
        bool total = f.name.size() > 6 && f.name.compare(f.name.size() - 6, 6, "_total") == 0;
        EXPECT_EQ(total, f.type == prometheus::MetricType::Counter) << f.name << ": counters and only counters end in _total";
        EXPECT_FALSE(f.help.empty()) << f.name;
        EXPECT_EQ(f.name.find("_ms"), std::string::npos) << f.name << ": base units (seconds)";
        if (f.type == prometheus::MetricType::Histogram)
            EXPECT_TRUE(listed.count(f.name + "_bucket")) << f.name;
        else
            EXPECT_TRUE(listed.count(f.name)) << f.name << " missing from exported_metric_names()";
        for (const auto &m : f.metric) {
            bool has_target = false;
            for (const auto &l : m.label) has_target = has_target || (l.name == "target" && l.value == "a");
            EXPECT_TRUE(has_target) << f.name;
        }
    }
    // Everything listed is produced by a full scrape (nothing documented that is never sent).
    for (const auto &n : listed) {
        std::string base = n;
        for (const char *suf : {"_bucket", "_sum", "_count"})
            if (base.size() > strlen(suf) && base.compare(base.size() - strlen(suf), strlen(suf), suf) == 0 &&
                find(fs, base.substr(0, base.size() - strlen(suf))))
                base = base.substr(0, base.size() - strlen(suf));
        if (n == std::string(kPrefix) + "down") continue;  // only when down
        EXPECT_TRUE(find(fs, base)) << n;
    }
}

TEST(PromNames, TextFormatHasExactLeAndTotals) {
    auto fs = build_families("db1", sample_data(), nullptr);
    std::string text = prometheus::TextSerializer().Serialize(fs);
    EXPECT_NE(text.find("pg_stat_waits_up{target=\"db1\"} 1"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE pg_stat_waits_wait_duration_seconds histogram"), std::string::npos);
    EXPECT_NE(text.find("le=\"4.096e-06\""), std::string::npos) << "le printed exactly";
    EXPECT_NE(text.find("le=\"0.004194304\""), std::string::npos) << "le printed exactly";
    EXPECT_NE(text.find("le=\"+Inf\""), std::string::npos);
    EXPECT_NE(text.find("le=\"1.073741824\"} 3"), std::string::npos) << "0.9 s waits counted up to le=1.073741824";
    EXPECT_NE(text.find("le=\"0.536870912\"} 0"), std::string::npos);
    EXPECT_NE(text.find("pg_stat_waits_evictions_total{table=\"profile\",target=\"db1\"} 4"), std::string::npos);
}

TEST(PromNames, DownTargetHasUpZeroAndReasonOnly) {
    TargetData d;
    d.down_reason = "no_extension";
    auto fs = build_families("b", d, nullptr);
    ASSERT_TRUE(find(fs, "pg_stat_waits_up"));
    EXPECT_EQ(find(fs, "pg_stat_waits_up")->metric[0].gauge.value, 0);
    ASSERT_TRUE(find(fs, "pg_stat_waits_down"));
    bool reason = false;
    for (const auto &l : find(fs, "pg_stat_waits_down")->metric[0].label)
        reason = reason || (l.name == "reason" && l.value == "no_extension");
    EXPECT_TRUE(reason);
    EXPECT_FALSE(find(fs, "pg_stat_waits_sampled_seconds_total")) << "no stale data for a down target";
}

namespace {

// event -> its wait_series label ("" without) in one family.
std::map<std::string, std::string> series_of(const std::vector<prometheus::MetricFamily> &fs, const char *family) {
    std::map<std::string, std::string> series;
    for (const auto &m : find(fs, family)->metric) {
        std::string type, event, ws;
        for (const auto &l : m.label) {
            if (l.name == "wait_event_type") type = l.value;
            if (l.name == "wait_event") event = l.value;
            if (l.name == "wait_series") ws = l.value;
        }
        series[type + "/" + event] = ws;
    }
    return series;
}

}  // namespace

// Buffer waits keep one series across PostgreSQL 19's rename: 18's
// LWLock/BufferContent and 19's Buffer/Buffer{Shared,ShareExclusive,Exclusive}
// carry wait_series="buffer_content", BufferPin/BufferPin and
// Buffer/BufferCleanup "buffer_pin"; other events carry no wait_series.
TEST(PromNames, RenamedBufferWaitsShareAWaitSeries) {
    TargetData d = sample_data();
    d.exact = {{"", "LWLock", "BufferContent", 1, 0.1, 0.1}, {"", "Buffer", "BufferExclusive", 1, 0.1, 0.1},
               {"", "Buffer", "BufferShared", 1, 0.1, 0.1},  {"", "Buffer", "BufferShareExclusive", 1, 0.1, 0.1},
               {"", "BufferPin", "BufferPin", 1, 0.1, 0.1},  {"", "Buffer", "BufferCleanup", 1, 0.1, 0.1},
               {"", "LWLock", "BufferMapping", 1, 0.1, 0.1}, {"", "Lock", "transactionid", 1, 0.1, 0.1}};
    d.sampled = {{"client backend", "Buffer", "BufferExclusive", 10, 0.1}};
    auto fs = build_families("a", d, nullptr);
    std::map<std::string, std::string> series = series_of(fs, "pg_stat_waits_wait_seconds_total");
    EXPECT_EQ(series["LWLock/BufferContent"], "buffer_content");
    EXPECT_EQ(series["Buffer/BufferExclusive"], "buffer_content");
    EXPECT_EQ(series["Buffer/BufferShared"], "buffer_content");
    EXPECT_EQ(series["Buffer/BufferShareExclusive"], "buffer_content");
    EXPECT_EQ(series["BufferPin/BufferPin"], "buffer_pin");
    EXPECT_EQ(series["Buffer/BufferCleanup"], "buffer_pin");
    EXPECT_EQ(series["LWLock/BufferMapping"], "");
    EXPECT_EQ(series["Lock/transactionid"], "");
    EXPECT_EQ(series_of(fs, "pg_stat_waits_sampled_seconds_total")["Buffer/BufferExclusive"], "buffer_content");
}

// 17's case-only renames: 16's and 17's spelling of an event carry the same
// wait_series (the snake_case of 17's enum name) in every family with a
// wait_event label; LWLock names, which 17 did not rename, carry none, even
// where an IO event of the same name does (LWLock/WALWrite, IO/WALWrite).
TEST(PromNames, EventsRenamedIn17ShareAWaitSeries) {
    TargetData d = sample_data();
    d.exact = {{"", "IO", "WALSync", 1, 0.1, 0.1},        {"", "IO", "WalSync", 1, 0.1, 0.1},
               {"", "IO", "BufFileRead", 1, 0.1, 0.1},    {"", "IO", "BuffileRead", 1, 0.1, 0.1},
               {"", "IPC", "BufferIO", 1, 0.1, 0.1},      {"", "IPC", "BufferIo", 1, 0.1, 0.1},
               {"", "Activity", "BgWriterMain", 1, 0.1, 0.1}, {"", "Activity", "BgwriterMain", 1, 0.1, 0.1},
               {"", "Client", "LibPQWalReceiverConnect", 1, 0.1, 0.1},
               {"", "Client", "LibpqwalreceiverConnect", 1, 0.1, 0.1},
               {"", "IO", "WALWrite", 1, 0.1, 0.1},       {"", "LWLock", "WALWrite", 1, 0.1, 0.1},
               {"", "IO", "DataFileRead", 1, 0.1, 0.1},   {"", "IO", "walsync", 1, 0.1, 0.1}};
    d.sampled = {{"client backend", "IO", "WALSync", 10, 0.1}, {"client backend", "IO", "WalSync", 10, 0.1}};
    d.sessions = {{"walwriter", "IO", "WalSync", 1}};
    auto fs = build_families("a", d, nullptr);
    std::map<std::string, std::string> series = series_of(fs, "pg_stat_waits_wait_seconds_total");
    EXPECT_EQ(series["IO/WALSync"], "wal_sync");
    EXPECT_EQ(series["IO/WalSync"], "wal_sync");
    EXPECT_EQ(series["IO/BufFileRead"], "buffile_read");
    EXPECT_EQ(series["IO/BuffileRead"], "buffile_read");
    EXPECT_EQ(series["IPC/BufferIO"], "buffer_io");
    EXPECT_EQ(series["IPC/BufferIo"], "buffer_io");
    EXPECT_EQ(series["Activity/BgWriterMain"], "bgwriter_main");
    EXPECT_EQ(series["Activity/BgwriterMain"], "bgwriter_main");
    EXPECT_EQ(series["Client/LibPQWalReceiverConnect"], "libpqwalreceiver_connect");
    EXPECT_EQ(series["Client/LibpqwalreceiverConnect"], "libpqwalreceiver_connect");
    EXPECT_EQ(series["IO/WALWrite"], "wal_write");
    EXPECT_EQ(series["LWLock/WALWrite"], "") << "17 renamed no LWLock";
    EXPECT_EQ(series["IO/DataFileRead"], "");
    EXPECT_EQ(series["IO/walsync"], "") << "names match exactly, as PostgreSQL reports them";
    auto sampled = series_of(fs, "pg_stat_waits_sampled_seconds_total");
    EXPECT_EQ(sampled["IO/WALSync"], "wal_sync");
    EXPECT_EQ(sampled["IO/WalSync"], "wal_sync");
    EXPECT_EQ(series_of(fs, "pg_stat_waits_sessions")["IO/WalSync"], "wal_sync");
}

TEST(PromMerge, OneFamilyPerNameAcrossTargets) {
    auto merged = merge_families({build_families("a", sample_data(), nullptr), build_families("b", sample_data(), nullptr)});
    std::set<std::string> names;
    for (const auto &f : merged) EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_EQ(find(merged, "pg_stat_waits_up")->metric.size(), 2u);
}

TEST(CounterGuard, EvictionFallIsCarriedResetIsNot) {
    CounterGuard g;
    g.begin_round();
    EXPECT_DOUBLE_EQ(g.apply("k", 100), 100);
    g.end_round();
    g.begin_round();
    EXPECT_DOUBLE_EQ(g.apply("k", 90), 100) << "a key evicted (-10): the series stays monotonic";
    g.end_round();
    g.begin_round();
    EXPECT_DOUBLE_EQ(g.apply("k", 95), 105);
    g.end_round();
    g.clear();  // pg_stat_waits_reset()
    g.begin_round();
    EXPECT_DOUBLE_EQ(g.apply("k", 1), 1);
    g.end_round();
    g.begin_round();
    g.end_round();
    EXPECT_EQ(g.size(), 0u) << "series not seen in a round are forgotten";
}

TEST(CounterGuard, AppliedToCountersNotGauges) {
    CounterGuard g;
    TargetData d = sample_data();
    build_families("a", d, &g);
    d.sampled[0].seconds = 2.0;  // evicted keys of this event
    d.sessions[0].sessions = 1;
    auto fs = build_families("a", d, &g);
    EXPECT_DOUBLE_EQ(find(fs, "pg_stat_waits_sampled_seconds_total")->metric[0].counter.value, 3.0);
    EXPECT_DOUBLE_EQ(find(fs, "pg_stat_waits_sessions")->metric[0].gauge.value, 1.0);
}

TEST(StatusColumns, EvictionAndDropCounters) {
    std::string kind;
    EXPECT_EQ(counter_table("profile_evicted", &kind), "profile");
    EXPECT_EQ(kind, "evictions");
    EXPECT_EQ(counter_table("query_deallocations", &kind), "query");
    EXPECT_EQ(kind, "evictions");
    EXPECT_EQ(counter_table("profile_dropped", &kind), "profile");
    EXPECT_EQ(kind, "dropped");
    EXPECT_EQ(counter_table("profile_entries", &kind), "");
    EXPECT_EQ(counter_table("_dropped", &kind), "");
}

TEST(Targets, ParsesNamesAndConnectionStrings) {
    std::vector<std::pair<std::string, std::string>> t;
    std::string err;
    ASSERT_TRUE(parse_targets("# fleet\n\nprimary = host=db1 dbname=postgres\n"
                              "  replica-2 = postgresql://mon@db2/postgres?sslmode=require  \n",
                              &t, &err))
        << err;
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].first, "primary");
    EXPECT_EQ(t[0].second, "host=db1 dbname=postgres");
    EXPECT_EQ(t[1].second, "postgresql://mon@db2/postgres?sslmode=require");
    for (const char *bad : {"noequals\n", "bad name = host=x\n", "a = \n", "a = host=x\na = host=y\n"}) {
        t.clear();
        EXPECT_FALSE(parse_targets(bad, &t, &err)) << bad;
        EXPECT_NE(err.find("line "), std::string::npos) << err;
    }
}

TEST(ServeCli, OptionsAndDefaults) {
    auto r = parse_args({"serve", "--listen", "127.0.0.1:9999", "--target", "a=host=x port=5", "--config", "f"});
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.options.listen, "127.0.0.1:9999");
    ASSERT_EQ(r.options.targets.size(), 1u);
    EXPECT_EQ(r.options.targets[0].first, "a");
    EXPECT_EQ(r.options.targets[0].second, "host=x port=5");
    EXPECT_EQ(r.options.top_n, 20);
    EXPECT_EQ(r.options.histogram_events, 64);
    EXPECT_FALSE(parse_args({"serve", "--target", "nodsn"}).error.empty());
    EXPECT_FALSE(parse_args({"serve", "--histogram-events", "-1"}).error.empty());
    EXPECT_EQ(parse_args({"serve", "--top", "5"}).options.top_n, 5);
    EXPECT_DOUBLE_EQ(r.options.slow_interval_s, 60);
    EXPECT_DOUBLE_EQ(parse_args({"serve", "--slow-interval", "5min"}).options.slow_interval_s, 300);
}

}  // namespace
