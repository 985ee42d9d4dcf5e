// Exact timing against a real server: the wrappers installed in the
// executable's GOT time sleeps, lock waits, I/O and contention; the per-query
// breakdown matches the server clock; timing off moves nothing.
//
// Counters are cumulative since the last reset and shared by the whole
// cluster, so every test compares before/after deltas of its own work.
#include "harness.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace psw_it;

namespace {

struct Totals {
    long long calls = 0;
    double total_ms = 0;
};

class Timing : public ::testing::Test {
protected:
    void SetUp() override {
        admin = connect();
        exec(*admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_waits");
    }
    std::unique_ptr<pqxx::connection> admin;

    // A session with exact timing on (SET by a superuser).
    std::unique_ptr<pqxx::connection> timed_session() {
        auto c = connect();
        exec(*c, "SET pg_stat_waits.timing = on");
        return c;
    }

    Totals event(const std::string &type, const std::string &name) {
        pqxx::result r = exec(*admin, "SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_waits "
                                      "WHERE wait_event_type = '" + type + "' AND wait_event = '" + name + "'");
        return Totals{r[0][0].as<long long>(), r[0][1].as<double>()};
    }
    Totals event_class(const std::string &where) {
        pqxx::result r = exec(*admin, "SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_waits "
                                      "WHERE " + where);
        return Totals{r[0][0].as<long long>(), r[0][1].as<double>()};
    }
    Totals query_event(long long queryid, const std::string &type, const std::string &name) {
        pqxx::result r = exec(*admin, "SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) "
                                      "FROM pg_stat_waits_queries WHERE queryid = " + std::to_string(queryid) +
                                      " AND wait_event_type = '" + type + "' AND wait_event = '" + name + "'");
        return Totals{r[0][0].as<long long>(), r[0][1].as<double>()};
    }
    // Waits until only the listed extra client backends are alive, so that
    // exit flushes of earlier sessions cannot land inside a measurement.
    void wait_for_quiet(int other_clients) {
        ASSERT_TRUE(wait_until([&] {
            return scalar<int>(*admin, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                                       "AND pid <> pg_backend_pid()") == other_clients;
        })) << "sessions of earlier tests did not exit";
    }
};

TEST_F(Timing, StatusListsTheInterposedCalls) {
    auto r = exec(*admin, "SELECT 'epoll_wait' = ANY(interposed), 'pread' = ANY(interposed), "
                          "'sem_wait' = ANY(interposed), 'fdatasync' = ANY(interposed) FROM pg_stat_waits_status");
    for (int i = 0; i < 4; i++) EXPECT_TRUE(r[0][i].as<bool>()) << "column " << i;
}

TEST_F(Timing, FivePgSleepsAddUpToOneSecond) {
    auto s = timed_session();
    Totals before = event("Timeout", "PgSleep");
    for (int i = 0; i < 5; i++) exec(*s, "SELECT pg_sleep(0.2)");
    Totals after = event("Timeout", "PgSleep");  // flushed at each statement end
    EXPECT_GE(after.calls - before.calls, 5);
    double ms = after.total_ms - before.total_ms;
    EXPECT_GE(ms, 1000.0);
    EXPECT_LE(ms, 1030.0);

    // The same sleeps under the statement's queryid, with a small CPU row.
    auto qid = scalar<long long>(*admin, "SELECT queryid FROM pg_stat_waits_queries WHERE wait_event = 'PgSleep' "
                                         "ORDER BY total_time DESC LIMIT 1");
    ASSERT_TRUE(qid.has_value());
    Totals q = query_event(*qid, "Timeout", "PgSleep");
    EXPECT_GE(q.total_ms, 1000.0);
    Totals cpu = query_event(*qid, "CPU", "CPU");
    EXPECT_GE(cpu.calls, 5);
    EXPECT_GE(cpu.total_ms, 0.0);
    EXPECT_LT(cpu.total_ms / cpu.calls, 20.0) << "CPU per pg_sleep statement";
}

TEST_F(Timing, RowLockWaitMatchesServerClockAndItsQuery) {
    exec(*admin, "DROP TABLE IF EXISTS it_timing_rows");
    exec(*admin, "CREATE TABLE it_timing_rows (id int PRIMARY KEY, v int)");
    exec(*admin, "INSERT INTO it_timing_rows VALUES (1, 0)");
    auto holder = connect();
    auto waiter = timed_session();
    int waiter_pid = backend_pid(*waiter);
    Totals before = event("Lock", "transactionid");

    pqxx::work hold(*holder);
    hold.exec("UPDATE it_timing_rows SET v = v + 1 WHERE id = 1");
    exec(*waiter, "BEGIN");
    exec(*waiter, "CREATE TEMP TABLE IF NOT EXISTS it_clock (t timestamptz)");
    exec(*waiter, "INSERT INTO it_clock SELECT clock_timestamp()");
    Background blocked(*waiter, "UPDATE it_timing_rows SET v = v + 10 WHERE id = 1");
    std::optional<long long> qid;
    ASSERT_TRUE(wait_until([&] {
        auto r = exec(*admin, "SELECT query_id FROM pg_stat_activity WHERE wait_event = 'transactionid' AND pid = " +
                                  std::to_string(waiter_pid));
        if (r.empty()) return false;
        qid = r[0][0].as<long long>();
        return true;
    })) << "waiter never blocked";
    // While blocked, the live wait time is shown.
    auto live = scalar<double>(*admin, "SELECT wait_time FROM pg_stat_waits_activity WHERE pid = " +
                                           std::to_string(waiter_pid));
    ASSERT_TRUE(live.has_value()) << "wait_time NULL during a timed wait";
    EXPECT_GE(*live, 0.0);
    EXPECT_LT(*live, 2000.0);
    Totals q_before = query_event(*qid, "Lock", "transactionid");
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    hold.commit();
    blocked.join();
    ASSERT_EQ(blocked.error(), "");
    double server_ms = *scalar<double>(*waiter, "SELECT extract(epoch FROM clock_timestamp() - t) * 1000 FROM it_clock");
    exec(*waiter, "COMMIT");

    Totals after = event("Lock", "transactionid");
    double lock_ms = after.total_ms - before.total_ms;
    EXPECT_GE(server_ms, 900.0);
    EXPECT_NEAR(lock_ms, server_ms, server_ms * 0.03) << "Lock/transactionid vs server clock";

    Totals q_after = query_event(*qid, "Lock", "transactionid");
    EXPECT_NEAR(q_after.total_ms - q_before.total_ms, lock_ms, 0.01 + lock_ms * 1e-6)
        << "the statement's own breakdown";
    auto cpu = scalar<long long>(*admin, "SELECT calls FROM pg_stat_waits_queries WHERE wait_event_type = 'CPU' "
                                         "AND queryid = " + std::to_string(*qid));
    ASSERT_TRUE(cpu.has_value()) << "no CPU row next to the lock wait";
    EXPECT_GE(*cpu, 1);
}

TEST_F(Timing, CommitsWithFsyncYieldWalTime) {
    ASSERT_EQ(*scalar<std::string>(*admin, "SHOW fsync"), "on");
    exec(*admin, "DROP TABLE IF EXISTS it_timing_wal");
    exec(*admin, "CREATE TABLE it_timing_wal (v int)");
    auto s = timed_session();
    Totals before = event_class("wait_event_type = 'IO' AND wait_event IN ('WALSync', 'WALWrite')");
    for (int i = 0; i < 20; i++) exec(*s, "INSERT INTO it_timing_wal VALUES (" + std::to_string(i) + ")");
    Totals after = event_class("wait_event_type = 'IO' AND wait_event IN ('WALSync', 'WALWrite')");
    EXPECT_GE(after.calls - before.calls, 20);
    EXPECT_GT(after.total_ms - before.total_ms, 0.0);

    // The commit of an explicit block belongs to its COMMIT statement, even
    // though pg_stat_statements hides utility ids from later hooks.
    exec(*admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    exec(*s, "BEGIN");
    exec(*s, "INSERT INTO it_timing_wal VALUES (-1)");
    exec(*s, "COMMIT");
    auto commit_id = scalar<long long>(*admin, "SELECT queryid FROM pg_stat_statements WHERE query = 'COMMIT' "
                                               "AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                                               "LIMIT 1");
    ASSERT_TRUE(commit_id.has_value());
    Totals q = query_event(*commit_id, "IO", "WALSync");
    EXPECT_GE(q.calls, 1) << "WALSync of the commit not under COMMIT's queryid";
    EXPECT_GT(q.total_ms, 0.0);
}

TEST_F(Timing, HotRowUnderPgbenchYieldsLockWaits) {
    std::string pgbench;
    for (std::string dir : {std::string(std::getenv("PSW_BINDIR") ? std::getenv("PSW_BINDIR") : ""),
                            std::string("/usr/lib/postgresql/15/bin")})
        if (!dir.empty() && access((dir + "/pgbench").c_str(), X_OK) == 0) {
            pgbench = dir + "/pgbench";
            break;
        }
    if (pgbench.empty()) GTEST_SKIP() << "pgbench not found";
    exec(*admin, "DROP TABLE IF EXISTS it_timing_hot");
    exec(*admin, "CREATE TABLE it_timing_hot (id int PRIMARY KEY, v int)");
    exec(*admin, "INSERT INTO it_timing_hot VALUES (1, 0)");
    char script[] = "/tmp/psw_hot_XXXXXX";
    int fd = mkstemp(script);
    ASSERT_GE(fd, 0);
    std::string body = "UPDATE it_timing_hot SET v = v + 1 WHERE id = 1;\n";
    ASSERT_EQ(write(fd, body.data(), body.size()), static_cast<ssize_t>(body.size()));
    close(fd);
    Totals before = event_class("wait_event_type IN ('Lock', 'LWLock')");
    std::string cmd = "PGOPTIONS='-c pg_stat_waits.timing=on' " + pgbench + " -n -c 8 -j 2 -t 150 -f " + script +
                      " '" + conninfo() + "' >/dev/null 2>&1";
    int rc = std::system(cmd.c_str());
    unlink(script);
    ASSERT_EQ(rc, 0) << cmd;
    wait_for_quiet(0);  // pgbench sessions flushed at exit
    Totals after = event_class("wait_event_type IN ('Lock', 'LWLock')");
    EXPECT_GT(after.calls - before.calls, 0);
    EXPECT_GT(after.total_ms - before.total_ms, 0.0);
}

TEST_F(Timing, TimingOffMovesNothingAndOffStopsAtOnce) {
    wait_for_quiet(0);
    auto s = connect();
    auto snapshot = [&] {
        return exec(*admin, "SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_waits), "
                            "(SELECT coalesce(sum(calls), 0) FROM pg_stat_waits_queries)");
    };
    pqxx::result a = snapshot();
    exec(*s, "SELECT pg_sleep(0.1)");
    exec(*s, "CREATE TEMP TABLE it_off AS SELECT g FROM generate_series(1, 1000) g");
    exec(*s, "SELECT count(*) FROM it_off");
    pqxx::result b = snapshot();
    EXPECT_EQ(a[0][0].as<long long>(), b[0][0].as<long long>()) << "pg_stat_waits moved with timing off";
    EXPECT_EQ(a[0][1].as<long long>(), b[0][1].as<long long>()) << "pg_stat_waits_queries moved with timing off";
    auto live = exec(*admin, "SELECT wait_time FROM pg_stat_waits_activity WHERE pid = " +
                                 std::to_string(backend_pid(*s)));
    EXPECT_TRUE(live[0][0].is_null());

    // On, then off: only the first sleep is counted.
    Totals before = event("Timeout", "PgSleep");
    exec(*s, "SET pg_stat_waits.timing = on");
    exec(*s, "SELECT pg_sleep(0.05)");
    exec(*s, "SET pg_stat_waits.timing = off");
    exec(*s, "SELECT pg_sleep(0.3)");
    Totals after = event("Timeout", "PgSleep");
    EXPECT_EQ(after.calls - before.calls, 1);
    EXPECT_GE(after.total_ms - before.total_ms, 50.0);
    EXPECT_LT(after.total_ms - before.total_ms, 300.0);
}

TEST_F(Timing, HistogramCountsSumToCalls) {
    auto s = timed_session();
    for (int i = 0; i < 3; i++) exec(*s, "SELECT pg_sleep(0.01)");
    s.reset();
    wait_for_quiet(0);
    auto r = exec(*admin, "SELECT w.wait_event_type, w.wait_event, w.calls, "
                          "(SELECT sum(count) FROM pg_stat_waits_histogram(w.wait_event_type, w.wait_event)) "
                          "FROM pg_stat_waits w");
    ASSERT_GT(r.size(), 0u);
    for (const auto &row : r)
        EXPECT_EQ(row[2].as<long long>(), row[3].as<long long>())
            << row[0].as<std::string>() << "/" << row[1].as<std::string>();
    auto b = exec(*admin, "SELECT lower_ms, upper_ms FROM pg_stat_waits_histogram('Timeout', 'PgSleep')");
    ASSERT_EQ(b.size(), 32u);
    EXPECT_EQ(b[0][0].as<double>(), 0.0);
    for (size_t i = 1; i < b.size(); i++) EXPECT_EQ(b[i][0].as<double>(), b[i - 1][1].as<double>());
    EXPECT_THROW(exec(*admin, "SELECT * FROM pg_stat_waits_histogram('Timeout', 'NoSuchEvent')"), pqxx::sql_error);
}

TEST_F(Timing, AlterSystemAndReloadTimeEverySession) {
    auto s = connect();  // never SETs timing itself
    // A statement that reports its own queryid, so its sleep can be found in
    // pg_stat_waits_queries even if other sessions sleep meanwhile (with
    // timing on for the whole server, every process is timed).
    const std::string stmt =
        "SELECT (SELECT queryid FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()), pg_sleep(0.05)";
    long long qid = exec(*admin, stmt)[0][0].as<long long>();  // timing is off here: not counted
    auto sleeps_of_stmt = [&] {
        auto r = exec(*admin, "SELECT coalesce(sum(calls), 0), coalesce(sum(total_time), 0) FROM pg_stat_waits_queries "
                              "WHERE wait_event = 'PgSleep' AND queryid = " + std::to_string(qid));
        return std::make_pair(r[0][0].as<long long>(), r[0][1].as<double>());
    };
    auto before = sleeps_of_stmt();
    exec(*admin, "ALTER SYSTEM SET pg_stat_waits.timing = on");
    exec(*admin, "SELECT pg_reload_conf()");
    bool on = wait_until([&] { return scalar<std::string>(*s, "SHOW pg_stat_waits.timing") == std::optional<std::string>("on"); });
    if (on) exec(*s, stmt);
    exec(*admin, "ALTER SYSTEM RESET pg_stat_waits.timing");
    exec(*admin, "SELECT pg_reload_conf()");
    ASSERT_TRUE(on) << "reload did not reach the session";
    auto after = sleeps_of_stmt();
    EXPECT_EQ(after.first - before.first, 1);
    EXPECT_GE(after.second - before.second, 50.0);
    EXPECT_TRUE(wait_until([&] { return scalar<std::string>(*s, "SHOW pg_stat_waits.timing") == std::optional<std::string>("off"); }));
}

// Needs shared_buffers smaller than the table: run by test/lib/suite_timing.sh
// in its own small cluster; skipped elsewhere.
TEST_F(Timing, SmallBuffersSeqScanYieldsDataFileReads) {
    auto sb = scalar<long long>(*admin, "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'");
    if (!sb || *sb > 32LL * 1024 * 1024) GTEST_SKIP() << "needs shared_buffers <= 32MB (suite_timing.sh)";
    long long rows = *sb / 8192 * 2 * 15;  // ~15 rows of ~500 bytes per page: twice shared_buffers
    exec(*admin, "DROP TABLE IF EXISTS it_timing_big");
    exec(*admin, "CREATE TABLE it_timing_big AS SELECT g, repeat('x', 480) AS pad FROM generate_series(1, " +
                     std::to_string(rows) + ") g");
    auto pages = scalar<long long>(*admin, "SELECT pg_relation_size('it_timing_big') / 8192");
    ASSERT_GT(*pages * 8192, *sb);
    auto s = timed_session();
    Totals before = event("IO", "DataFileRead");
    exec(*s, "SELECT count(*) FROM it_timing_big");
    Totals after = event("IO", "DataFileRead");
    EXPECT_GT(after.calls - before.calls, *pages / 4) << "a scan of " << *pages << " pages";
    EXPECT_GT(after.total_ms - before.total_ms, 0.0);
}

}  // namespace
