// The load model of pg_stat_waits_report: average active sessions from
// sampled cells (partial buckets, idle time apart), slices, top SQL by
// load and the comparison of two windows; and their HTML.
#include <gtest/gtest.h>

#include <map>

#include "cli.h"
#include "load_model.h"
#include "page_html.h"
#include "report_html.h"

using namespace psw_report;

namespace {

SampleCell cell(double bucket, const std::string &type, const std::string &event, int64_t n,
                SampleKind kind = SampleKind::Active, const std::string &queryid = "7") {
    SampleCell c;
    c.bucket_start = bucket;
    c.wait_event_type = type;
    c.wait_event = event;
    c.samples = n;
    c.kind = kind;
    c.queryid = queryid;
    c.user = "alice";
    c.database = "shop";
    c.backend_type = "client backend";
    return c;
}

// 10 ms period: 100 samples a second are one session.
SampleSet window_set(double from, double to) {
    SampleSet s;
    s.covered = {from, to};
    s.period_s = 0.01;
    return s;
}

// The bucket still filling is averaged over the time it covers: 4 sessions
// for the 15 s of a 60 s bucket that have passed read 4, not 1.
TEST(Load, PartialBucketIsAveragedOverItsCoveredTime) {
    SampleSet s = window_set(0, 75);
    s.cells = {cell(0, "Lock", "tuple", 6000 * 4), cell(60, "Lock", "tuple", 1500 * 4)};
    LoadChart ch = build_load_chart(s, Slice::WaitClass, 60);
    ASSERT_EQ(ch.points.size(), 2u);
    EXPECT_NEAR(ch.points[0].avg_active, 4.0, 1e-9);
    EXPECT_NEAR(ch.points[1].avg_active, 4.0, 1e-9);
    EXPECT_NEAR(ch.avg_load, 4.0, 1e-9);
}

// A bucket a moment old is averaged over at least one sample period: one
// sample 2 ms into it is one session, not five.
TEST(Load, FreshBucketCountsAtLeastOneSamplePeriod) {
    SampleSet s = window_set(0, 60.002);
    s.cells = {cell(0, "CPU", "CPU", 6000), cell(60, "CPU", "CPU", 1)};
    LoadChart ch = build_load_chart(s, Slice::WaitClass, 60);
    ASSERT_EQ(ch.points.size(), 2u);
    EXPECT_NEAR(ch.points[1].avg_active, 1.0, 1e-9);
}

// A window starting mid-bucket covers only part of its first bucket too.
TEST(Load, WindowStartCutsTheFirstBucket) {
    SampleSet s = window_set(30, 120);
    s.cells = {cell(0, "CPU", "CPU", 3000), cell(60, "CPU", "CPU", 6000)};
    LoadChart ch = build_load_chart(s, Slice::WaitClass, 60);
    ASSERT_EQ(ch.points.size(), 2u);
    EXPECT_NEAR(ch.points[0].avg_active, 1.0, 1e-9);
    EXPECT_NEAR(ch.points[1].avg_active, 1.0, 1e-9);
}

TEST(Load, IdleInTransactionAndIdleBackgroundAreNotLoad) {
    SampleSet s = window_set(0, 60);
    s.cells = {cell(0, "CPU", "CPU", 6000), cell(0, "Client", "ClientRead", 12000, SampleKind::IdleInTransaction),
               cell(0, "Activity", "WalWriterMain", 6000, SampleKind::IdleBackground, "")};
    LoadChart ch = build_load_chart(s, Slice::WaitClass, 60);
    ASSERT_EQ(ch.points.size(), 1u);
    EXPECT_EQ(ch.points[0].wait_event_type, "CPU");
    EXPECT_NEAR(ch.avg_load, 1.0, 1e-9);
    EXPECT_NEAR(ch.idle_in_transaction, 2.0, 1e-9);
    EXPECT_NEAR(ch.idle_background, 1.0, 1e-9);
}

TEST(Load, SlicesAndTheirLimit) {
    SampleSet s = window_set(0, 60);
    for (int i = 0; i < 12; i++) s.cells.push_back(cell(0, "CPU", "CPU", 100 * (i + 1), SampleKind::Active, std::to_string(i + 1)));
    LoadChart ch = build_load_chart(s, Slice::Sql, 60, 8);
    ASSERT_EQ(ch.keys.size(), 8u);  // 7 statements and "other"
    EXPECT_EQ(ch.keys.front(), "12");
    EXPECT_EQ(ch.keys.back(), "other");
    double total = 0;
    for (const auto &p : ch.points) total += p.avg_active;
    EXPECT_NEAR(total, 7800 * 0.01 / 60, 1e-9);  // nothing lost in "other"
    EXPECT_EQ(build_load_chart(s, Slice::User, 60).keys, std::vector<std::string>{"alice"});
    EXPECT_EQ(build_load_chart(s, Slice::Database, 60).keys, std::vector<std::string>{"shop"});
    EXPECT_EQ(build_load_chart(s, Slice::BackendType, 60).keys, std::vector<std::string>{"client backend"});
    // Minute buckets know wait events only: other slices fall back to classes, said so.
    s.by_wait_only = true;
    LoadChart w = build_load_chart(s, Slice::User, 60);
    EXPECT_FALSE(w.sliced_as_asked);
    EXPECT_EQ(w.slice, Slice::WaitClass);
    for (Slice sl : all_slices()) EXPECT_EQ(parse_slice(slice_param(sl)), sl);
    EXPECT_FALSE(parse_slice("nope"));
}

// The idle-in-transaction client wait after a statement is its own column:
// the statement's sampled CPU share is then that of its active samples.
TEST(Load, TopSqlKeepsIdleInTransactionApart) {
    SampleSet s = window_set(0, 10);
    s.cells = {cell(0, "CPU", "CPU", 950), cell(0, "Lock", "tuple", 50),
               cell(0, "Client", "ClientRead", 1000, SampleKind::IdleInTransaction),
               cell(0, "IO", "DataFileRead", 500, SampleKind::Active, "8"), cell(0, "CPU", "CPU", 10, SampleKind::Active, "0")};
    std::vector<TopSql> top = build_top_sql(s, 5);
    ASSERT_EQ(top.size(), 2u);  // no row for queryid 0
    EXPECT_EQ(top[0].queryid, "7");
    EXPECT_NEAR(top[0].load, 1.0, 1e-9);
    EXPECT_EQ(top[0].samples, 1000);
    EXPECT_NEAR(top[0].idle_in_transaction, 1.0, 1e-9);
    EXPECT_NEAR(type_share(top[0].waits, "CPU"), 95.0, 1e-9);
    EXPECT_EQ(top[1].queryid, "8");
}

TEST(Load, CompareRanksTheLargestChangeFirst) {
    SampleSet storm = window_set(0, 10), calm = window_set(100, 120);
    storm.cells = {cell(0, "Lock", "transactionid", 3000), cell(0, "CPU", "CPU", 1000)};
    calm.cells = {cell(100, "CPU", "CPU", 1600, SampleKind::Active, "9")};
    std::vector<CompareRow> w = compare_by_wait(storm, calm, 10);
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0].key, "Lock:transactionid");
    EXPECT_NEAR(w[0].delta(), 3.0, 1e-9);
    EXPECT_NEAR(w[1].current, 1.0, 1e-9);
    EXPECT_NEAR(w[1].baseline, 0.8, 1e-9);  // 1600 samples over 20 s
    std::vector<CompareRow> q = compare_by_sql(storm, calm, 10);
    ASSERT_EQ(q.size(), 2u);
    EXPECT_EQ(q[0].key, "7");
}

// A baseline from before an upgrade to 19 (LWLock/BufferContent,
// BufferPin/BufferPin) against a window on 19 (Buffer/*): buffer waits are
// compared as one row per series; within one release they keep their rows.
TEST(Load, CompareAcrossTheBufferRenameMergesBufferWaits) {
    SampleSet on19 = window_set(0, 10), on18 = window_set(100, 110);
    on19.cells = {cell(0, "Buffer", "BufferExclusive", 300), cell(0, "Buffer", "BufferShared", 100),
                  cell(0, "Buffer", "BufferCleanup", 50), cell(0, "CPU", "CPU", 1000)};
    on18.cells = {cell(100, "LWLock", "BufferContent", 200), cell(100, "BufferPin", "BufferPin", 50),
                  cell(100, "LWLock", "WALWrite", 100), cell(100, "CPU", "CPU", 1000)};
    std::vector<CompareRow> w = compare_by_wait(on19, on18, 10);
    std::map<std::string, CompareRow> by_key;
    for (const auto &r : w) by_key[r.key] = r;
    ASSERT_EQ(by_key.count("Buffer:content lock (any release)"), 1u);
    EXPECT_NEAR(by_key["Buffer:content lock (any release)"].current, 0.4, 1e-9);
    EXPECT_NEAR(by_key["Buffer:content lock (any release)"].baseline, 0.2, 1e-9);
    EXPECT_EQ(by_key["Buffer:content lock (any release)"].wait_event_type, "Buffer");
    EXPECT_NEAR(by_key["Buffer:pin (any release)"].current, 0.05, 1e-9);
    EXPECT_NEAR(by_key["Buffer:pin (any release)"].baseline, 0.05, 1e-9);
    EXPECT_EQ(by_key.count("LWLock:BufferContent"), 0u);
    EXPECT_EQ(by_key.count("Buffer:BufferExclusive"), 0u);
    EXPECT_NEAR(by_key["LWLock:WALWrite"].baseline, 0.1, 1e-9);  // other events keep their rows
    // Both windows on 19: no merging.
    std::vector<CompareRow> same = compare_by_wait(on19, on19, 10);
    bool exclusive_row = false;
    for (const auto &r : same) exclusive_row = exclusive_row || r.key == "Buffer:BufferExclusive";
    EXPECT_TRUE(exclusive_row);
}

namespace {

std::map<std::string, CompareRow> rows_by_key(const std::vector<CompareRow> &rows) {
    std::map<std::string, CompareRow> by_key;
    for (const auto &r : rows) by_key[r.key] = r;
    return by_key;
}

}  // namespace

// A window on 16 against one on 17: the events 17 renamed by case are
// compared as one row each, under 17's name; LWLock/WALWrite (not renamed)
// and events of one spelling keep their rows. A window spanning the upgrade
// (both spellings) against one on 17 merges too.
TEST(Load, CompareAcross17sRenamesMergesEachRenamedEvent) {
    SampleSet on17 = window_set(0, 10), on16 = window_set(100, 110);
    on17.cells = {cell(0, "IO", "WalSync", 300), cell(0, "IO", "BuffileRead", 100), cell(0, "IPC", "BufferIo", 20),
                  cell(0, "LWLock", "WALWrite", 50), cell(0, "CPU", "CPU", 1000)};
    on16.cells = {cell(100, "IO", "WALSync", 200), cell(100, "IO", "BufFileWrite", 40),
                  cell(100, "IPC", "BufferIO", 20), cell(100, "LWLock", "WALWrite", 100),
                  cell(100, "CPU", "CPU", 1000)};
    auto by_key = rows_by_key(compare_by_wait(on17, on16, 20));
    ASSERT_EQ(by_key.count("IO:WalSync (any release)"), 1u);
    EXPECT_NEAR(by_key["IO:WalSync (any release)"].current, 0.3, 1e-9);
    EXPECT_NEAR(by_key["IO:WalSync (any release)"].baseline, 0.2, 1e-9);
    EXPECT_EQ(by_key["IO:WalSync (any release)"].wait_event_type, "IO");
    EXPECT_NEAR(by_key["IPC:BufferIo (any release)"].current, 0.02, 1e-9);
    EXPECT_NEAR(by_key["IPC:BufferIo (any release)"].baseline, 0.02, 1e-9);
    EXPECT_NEAR(by_key["IO:BuffileRead (any release)"].current, 0.1, 1e-9);
    EXPECT_NEAR(by_key["IO:BuffileWrite (any release)"].baseline, 0.04, 1e-9);
    for (const char *gone : {"IO:WALSync", "IO:WalSync", "IPC:BufferIO", "IPC:BufferIo", "IO:BufFileWrite"})
        EXPECT_EQ(by_key.count(gone), 0u) << gone;
    EXPECT_NEAR(by_key["LWLock:WALWrite"].current, 0.05, 1e-9);
    EXPECT_NEAR(by_key["LWLock:WALWrite"].baseline, 0.1, 1e-9);
    EXPECT_EQ(by_key.count("Buffer:content lock (any release)"), 0u);

    // Both windows on 16, or both on 17: every event keeps its own row.
    auto same = rows_by_key(compare_by_wait(on16, on16, 20));
    EXPECT_EQ(same.count("IO:WALSync"), 1u);
    EXPECT_EQ(same.count("IO:WalSync (any release)"), 0u);
    EXPECT_EQ(rows_by_key(compare_by_wait(on17, on17, 20)).count("IO:WalSync"), 1u);

    // A window across the upgrade (both spellings) against one on 17.
    SampleSet upgrade = window_set(200, 210);
    upgrade.cells = {cell(200, "IO", "WALSync", 100), cell(200, "IO", "WalSync", 100)};
    auto across = rows_by_key(compare_by_wait(upgrade, on17, 20));
    EXPECT_NEAR(across["IO:WalSync (any release)"].current, 0.2, 1e-9);
    EXPECT_NEAR(across["IO:WalSync (any release)"].baseline, 0.3, 1e-9);
}

// 16 against 19: both renames lie between the windows and both merge; 17
// against 19: only the buffer waits do (17's names are 19's).
TEST(Load, CompareMergesOnlyTheRenamesBetweenTheWindows) {
    SampleSet on19 = window_set(0, 10), on16 = window_set(100, 110), on17 = window_set(200, 210);
    on19.cells = {cell(0, "IO", "WalSync", 100), cell(0, "Buffer", "BufferExclusive", 100)};
    on16.cells = {cell(100, "IO", "WALSync", 100), cell(100, "LWLock", "BufferContent", 100)};
    on17.cells = {cell(200, "IO", "WalSync", 100), cell(200, "LWLock", "BufferContent", 100)};
    auto from16 = rows_by_key(compare_by_wait(on19, on16, 20));
    EXPECT_EQ(from16.count("IO:WalSync (any release)"), 1u);
    EXPECT_EQ(from16.count("Buffer:content lock (any release)"), 1u);
    EXPECT_EQ(from16.size(), 2u);
    auto from17 = rows_by_key(compare_by_wait(on19, on17, 20));
    EXPECT_EQ(from17.count("IO:WalSync"), 1u);
    EXPECT_NEAR(from17["IO:WalSync"].baseline, 0.1, 1e-9);
    EXPECT_EQ(from17.count("IO:WalSync (any release)"), 0u);
    EXPECT_EQ(from17.count("Buffer:content lock (any release)"), 1u);
}

TEST(LoadHtml, CpuLineTopSqlTextAndBlockers) {
    ReportData d;
    d.now_epoch = 120;
    d.load = std::make_shared<LoadSections>();
    LoadSections &ls = *d.load;
    ls.window = {0, 120};
    ls.load_av.available = ls.top_sql_av.available = ls.blocking_av.available = true;
    SampleSet s = window_set(0, 120);
    s.cells = {cell(0, "CPU", "CPU", 6000), cell(60, "Lock", "tuple", 12000)};
    ls.chart = build_load_chart(s, Slice::WaitClass, 60);
    ls.chart.cpu_count = 2;
    ls.top_sql = build_top_sql(s, 5);
    std::string long_text = "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2 " + std::string(200, 'x');
    ls.top_sql[0].text = long_text;
    ls.top_sql[0].exact_ms = 100;
    ls.top_sql[0].exact = {{"CPU", "CPU", 40}, {"Lock", "tuple", 60}};
    BlockingSession b;
    b.pid = 4242;
    b.state = "idle in transaction";
    b.blocked_s = 12.5;
    b.waiters = 3;
    ls.blocking = {b};
    std::string html = render_report_html(d);
    EXPECT_NE(html.find("<line class=\"cpu-line\""), std::string::npos);
    EXPECT_NE(html.find("Max CPU (2)"), std::string::npos);
    // The full text is on the page, and the cut one says it is cut.
    EXPECT_NE(html.find("WHERE tid = $2 " + std::string(200, 'x') + "</pre>"), std::string::npos);
    EXPECT_NE(html.find("open for the full text"), std::string::npos);
    EXPECT_NE(html.find("data-cpu-exact=\"40.0\""), std::string::npos);
    EXPECT_NE(html.find("data-pid=\"4242\""), std::string::npos);
    EXPECT_NE(html.find("12.50 s"), std::string::npos);
    // A file has no picker; the live page has one, with links that keep the path.
    EXPECT_EQ(html.find("class=\"picker\""), std::string::npos);
    ls.page_path = "/report/main";
    ls.window_param = "5min";
    html = render_report_html(d);
    EXPECT_NE(html.find("href=\"/report/main?window=1h&amp;slice=class\""), std::string::npos);
    EXPECT_NE(html.find("data-slice=\"sql\" href=\"/report/main?window=5min&amp;slice=sql\""), std::string::npos);
}

TEST(Cli, WindowSliceCompareAndVersion) {
    ParseResult r = parse_args({"report", "--from", "2024-05-01 10:00", "--to=2024-05-01 11:00", "--compare", "1d",
                                "--slice", "sql", "--html", "x.html"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.options.from, "2024-05-01 10:00");
    EXPECT_EQ(r.options.to, "2024-05-01 11:00");
    EXPECT_EQ(r.options.compare, "1d");
    EXPECT_EQ(r.options.slice, "sql");
    EXPECT_NE(parse_args({"report", "--to", "x", "--html", "x.html"}).error.find("--to needs --from"), std::string::npos);
    EXPECT_NE(parse_args({"report", "--slice", "colour", "--html", "x.html"}).error.find("invalid --slice"),
              std::string::npos);
    ParseResult v = parse_args({"--version"});
    EXPECT_EQ(v.error, "");
    EXPECT_TRUE(v.options.version);
    EXPECT_NE(version_text().find("pg_stat_waits_report"), std::string::npos);
}

}  // namespace
