// The sampler against real sessions: lock waits and sleeps become the right
// number of samples under the right queryid, idle filtering, history order,
// top/timeline agreeing with the profile, parallel workers, and restart.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "harness.h"

using namespace psw_it;

namespace {

class Sampling : public ::testing::Test {
protected:
    void SetUp() override {
        admin = connect();
        exec(*admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_waits");
        period_ms = *scalar<int>(*admin, "SELECT sample_period_ms FROM pg_stat_waits_status");
        ASSERT_GT(period_ms, 0);
        ASSERT_TRUE(wait_until([&] { return sampler_pid() != 0; })) << "no sampler running";
    }
    void TearDown() override {
        if (changed_system) {
            exec(*admin, "ALTER SYSTEM RESET pg_stat_waits.sample_period");
            exec(*admin, "ALTER SYSTEM RESET pg_stat_waits.sample_idle");
            exec(*admin, "SELECT pg_reload_conf()");
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
    int sampler_pid() {
        return scalar<int>(*admin, "SELECT sampler_pid FROM pg_stat_waits_status").value_or(0);
    }
    long long samples_taken() { return *scalar<long long>(*admin, "SELECT samples_taken FROM pg_stat_waits_status"); }
    void set_system(const std::string &name, const std::string &value) {
        changed_system = true;
        exec(*admin, "ALTER SYSTEM SET pg_stat_waits." + name + " = '" + value + "'");
        exec(*admin, "SELECT pg_reload_conf()");
    }
    // Stops sampling and waits until the sampler has seen the new period.
    void freeze_sampler() {
        set_system("sample_period", "0");
        long long before = -1, now = samples_taken();
        ASSERT_TRUE(wait_until([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            before = now;
            now = samples_taken();
            return before == now;
        }));
    }
    long long profile_samples(long long queryid, const std::string &wait_event) {
        return scalar<long long>(*admin, "SELECT sum(samples) FROM pg_stat_waits_profile WHERE queryid = " +
                                             std::to_string(queryid) + " AND wait_event = '" + wait_event + "'")
            .value_or(0);
    }

    std::unique_ptr<pqxx::connection> admin;
    int period_ms = 10;
    bool changed_system = false;
};

TEST_F(Sampling, RowLockWaitBecomesLockSamplesUnderTheBlockedQueryid) {
    exec(*admin, "DROP TABLE IF EXISTS it_sampling_rows");
    exec(*admin, "CREATE TABLE it_sampling_rows (id int PRIMARY KEY, v int)");
    exec(*admin, "INSERT INTO it_sampling_rows VALUES (1, 0)");
    auto holder = connect();
    auto blocked = connect();
    int blocked_pid = backend_pid(*blocked);
    pqxx::work hold(*holder);
    hold.exec("UPDATE it_sampling_rows SET v = v + 1 WHERE id = 1");

    auto start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point end;
    long long queryid = 0;
    {
        Background waiter(*blocked, "UPDATE it_sampling_rows SET v = v + 10 WHERE id = 1");
        ASSERT_TRUE(wait_until([&] {
            return scalar<std::string>(*admin, "SELECT wait_event FROM pg_stat_activity WHERE pid = " +
                                                   std::to_string(blocked_pid)) == std::optional<std::string>("transactionid");
        }));
        queryid = *scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity WHERE pid = " + std::to_string(blocked_pid));
        std::this_thread::sleep_for(std::chrono::milliseconds(2000));
        hold.commit();
        waiter.join();
        end = std::chrono::steady_clock::now();
        EXPECT_TRUE(waiter.error().empty()) << waiter.error();
    }
    // The blocked wait lasted at most start..end (connection round trips included).
    double upper_ms = std::chrono::duration<double, std::milli>(end - start).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * period_ms));
    long long got = profile_samples(queryid, "transactionid");
    double expected = 2000.0 / period_ms;
    EXPECT_GE(got, expected * 0.85) << "blocked for ~" << upper_ms << " ms";
    EXPECT_LE(got, upper_ms / period_ms * 1.15);
    EXPECT_EQ(*scalar<std::string>(*admin, "SELECT DISTINCT wait_event_type FROM pg_stat_waits_profile WHERE queryid = " +
                                               std::to_string(queryid) + " AND wait_event = 'transactionid'"),
              "Lock");
}

TEST_F(Sampling, PgSleepOneSecondIsAboutOneHundredSamples) {
    auto s = connect();
    int pid = backend_pid(*s);
    exec(*s, "SELECT pg_sleep(1)");
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * period_ms));
    long long n = *scalar<long long>(*admin, "SELECT count(*) FROM pg_stat_waits_history WHERE pid = " +
                                                 std::to_string(pid) + " AND wait_event_type = 'Timeout' AND wait_event = 'PgSleep'");
    double expected = 1000.0 / period_ms;
    EXPECT_GE(n, expected * 0.9);
    EXPECT_LE(n, expected * 1.1);
}

TEST_F(Sampling, HistoryIsOldestFirstAndSpacedByThePeriod) {
    auto s = connect();
    int pid = backend_pid(*s);
    exec(*s, "SELECT pg_sleep(0.5)");
    pqxx::result r = exec(*admin, "SELECT extract(epoch FROM sample_time)::float8 FROM pg_stat_waits_history WHERE pid = " +
                                      std::to_string(pid) + " AND wait_event = 'PgSleep'");
    ASSERT_GE(r.size(), 40u);
    std::vector<double> gaps;
    for (size_t i = 1; i < r.size(); i++) {
        double gap_ms = (r[i][0].as<double>() - r[i - 1][0].as<double>()) * 1000.0;
        ASSERT_GT(gap_ms, 0.0) << "history not ordered oldest first at row " << i;
        gaps.push_back(gap_ms);
    }
    std::sort(gaps.begin(), gaps.end());
    double median = gaps[gaps.size() / 2];
    EXPECT_NEAR(median, period_ms, period_ms * 0.2);
    // The strict "no gap over two periods" check runs in the --long suite on
    // its own cluster; here the shared 2-core test machine may deschedule the
    // sampler now and then, so require it of nearly every tick.
    size_t within = 0;
    for (double g : gaps) within += g < 2.0 * period_ms ? 1 : 0;
    EXPECT_GE(within, gaps.size() * 9 / 10) << "largest gap " << gaps.back() << " ms";
}

TEST_F(Sampling, IdleConnectionsAreSampledOnlyWithSampleIdle) {
    std::vector<std::unique_ptr<pqxx::connection>> idle;
    std::set<int> pids;
    for (int i = 0; i < 200; i++) {
        idle.push_back(connect());
        pids.insert(backend_pid(*idle.back()));
    }
    // Connection start-up itself is real CPU work (sampled); only what follows is idle.
    std::string since = *scalar<std::string>(*admin, "SELECT clock_timestamp()::text");
    std::string list;
    for (int p : pids) list += (list.empty() ? "" : ",") + std::to_string(p);
    auto count_idle = [&](const std::string &extra) {
        return *scalar<long long>(*admin, "SELECT count(*) FROM pg_stat_waits_history WHERE pid IN (" + list + ")" +
                                              " AND sample_time > '" + since + "'" + extra);
    };
    long long before = count_idle("");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(count_idle(""), before) << "idle connections were sampled with sample_idle = off";

    set_system("sample_idle", "on");
    ASSERT_TRUE(wait_until([&] { return scalar<std::string>(*admin, "SHOW pg_stat_waits.sample_idle") == std::optional<std::string>("on"); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    long long distinct_pids = *scalar<long long>(
        *admin, "SELECT count(DISTINCT pid) FROM pg_stat_waits_history WHERE pid IN (" + list +
                    ") AND wait_event_type = 'Client' AND wait_event = 'ClientRead'");
    EXPECT_EQ(distinct_pids, 200);
    // Idle backends briefly wake for sinval catch-up or other interrupts
    // (real, if tiny, work): nearly every sample must still be ClientRead.
    long long all = count_idle("");
    long long client_read = count_idle(" AND wait_event = 'ClientRead'");
    EXPECT_GE(client_read, all * 0.99) << all - client_read << " of " << all << " idle samples were not ClientRead";
    EXPECT_GE(client_read, 200 * (500 / period_ms) / 2);
}

TEST_F(Sampling, TopAndTimelineAgreeWithTheProfile) {
    exec(*admin, "SELECT pg_stat_waits_reset()");
    auto s = connect();
    exec(*s, "SELECT pg_sleep(0.3)");
    freeze_sampler();
    pqxx::result prof = exec(*admin, "SELECT coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-'), sum(samples)::bigint "
                                     "FROM pg_stat_waits_profile GROUP BY 1");
    pqxx::result top = exec(*admin, "SELECT coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-'), samples "
                                    "FROM pg_stat_waits_top('1 hour', 1000)");
    pqxx::result tl = exec(*admin, "SELECT coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-'), sum(samples)::bigint "
                                   "FROM pg_stat_waits_timeline('1 hour', '10 seconds') GROUP BY 1");
    long long hist = *scalar<long long>(*admin, "SELECT count(*) FROM pg_stat_waits_history");
    auto as_map = [](const pqxx::result &r) {
        std::map<std::string, long long> m;
        for (const auto &row : r) m[row[0].as<std::string>()] = row[1].as<long long>();
        return m;
    };
    auto p = as_map(prof);
    ASSERT_GE(p["Timeout/PgSleep"], 25);
    EXPECT_EQ(as_map(top), p);
    EXPECT_EQ(as_map(tl), p);
    long long total = 0;
    for (const auto &kv : p) total += kv.second;
    EXPECT_EQ(hist, total);
    // pct adds up to 100 and est_time is samples x period.
    EXPECT_NEAR(*scalar<double>(*admin, "SELECT sum(pct) FROM pg_stat_waits_top('1 hour', 1000)"), 100.0, 1e-6);
    EXPECT_EQ(*scalar<long long>(*admin, "SELECT count(*) FROM pg_stat_waits_profile WHERE est_time <> samples * " +
                                             std::to_string(period_ms)),
              0);
}

TEST_F(Sampling, ParallelWorkersCarryLeaderPidAndLeaderQueryid) {
    exec(*admin, "DROP TABLE IF EXISTS it_sampling_par");
    exec(*admin, "CREATE TABLE it_sampling_par AS SELECT g AS id FROM generate_series(1, 4000) g");
    exec(*admin, "ANALYZE it_sampling_par");
    auto s = connect();
    int leader = backend_pid(*s);
    exec(*s, "SET max_parallel_workers_per_gather = 2");
    exec(*s, "SET parallel_setup_cost = 0");
    exec(*s, "SET parallel_tuple_cost = 0");
    exec(*s, "SET min_parallel_table_scan_size = 0");
    exec(*s, "SET parallel_leader_participation = off");
    const std::string q = "SELECT count(*) FROM it_sampling_par WHERE pg_sleep(0.0004) IS NOT NULL";
    std::string plan;
    for (const auto &row : exec(*s, "EXPLAIN " + q)) plan += row[0].as<std::string>() + "\n";
    ASSERT_NE(plan.find("Gather"), std::string::npos) << plan;
    exec(*s, q);
    long long queryid = *scalar<long long>(*admin, "SELECT queryid FROM pg_stat_statements WHERE query LIKE "
                                                   "'SELECT count(*) FROM it_sampling_par WHERE pg_sleep%' LIMIT 1");
    pqxx::result r = exec(*admin, "SELECT count(*), count(*) FILTER (WHERE queryid = " + std::to_string(queryid) +
                                      "), count(DISTINCT pid) FROM pg_stat_waits_history WHERE leader_pid = " +
                                      std::to_string(leader) + " AND pid <> " + std::to_string(leader));
    long long worker_samples = r[0][0].as<long long>();
    EXPECT_GE(worker_samples, 20) << "no parallel worker samples";
    EXPECT_EQ(r[0][1].as<long long>(), worker_samples) << "worker samples without the leader's queryid";
    EXPECT_GE(r[0][2].as<long long>(), 1);
}

TEST_F(Sampling, ForeignKeyInsertBlockedByRowLockIsAttributedToTheInsert) {
    exec(*admin, "DROP TABLE IF EXISTS it_sampling_child, it_sampling_parent");
    exec(*admin, "CREATE TABLE it_sampling_parent (id int PRIMARY KEY)");
    exec(*admin, "CREATE TABLE it_sampling_child (pid int REFERENCES it_sampling_parent)");
    exec(*admin, "INSERT INTO it_sampling_parent VALUES (1)");
    auto holder = connect();
    auto blocked = connect();
    int pid = backend_pid(*blocked);
    pqxx::work hold(*holder);
    hold.exec("SELECT * FROM it_sampling_parent WHERE id = 1 FOR UPDATE");
    long long queryid = 0;
    {
        Background waiter(*blocked, "INSERT INTO it_sampling_child VALUES (1)");
        ASSERT_TRUE(wait_until([&] {
            return scalar<std::string>(*admin, "SELECT wait_event_type FROM pg_stat_activity WHERE pid = " +
                                                   std::to_string(pid)) == std::optional<std::string>("Lock");
        }));
        queryid = *scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity WHERE pid = " + std::to_string(pid));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        hold.commit();
        waiter.join();
    }
    pqxx::result r = exec(*admin, "SELECT count(*), count(*) FILTER (WHERE queryid = " + std::to_string(queryid) +
                                      ") FROM pg_stat_waits_history WHERE pid = " + std::to_string(pid) +
                                      " AND wait_event_type = 'Lock'");
    EXPECT_GE(r[0][0].as<long long>(), 20);
    EXPECT_EQ(r[0][1].as<long long>(), r[0][0].as<long long>());
}

TEST_F(Sampling, TerminatedSamplerIsReplacedWithinTwoSeconds) {
    auto other = connect();
    int old_pid = sampler_pid();
    ASSERT_NE(old_pid, 0);
    Background busy(*other, "SELECT pg_sleep(1.5)");
    ASSERT_TRUE(*scalar<bool>(*admin, "SELECT pg_terminate_backend(" + std::to_string(old_pid) + ")"));
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(wait_until([&] {
        int p = sampler_pid();
        return p != 0 && p != old_pid;
    }, std::chrono::milliseconds(2000))) << "no new sampler within 2 s";
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    long long taken = samples_taken();
    EXPECT_TRUE(wait_until([&] { return samples_taken() > taken; }, std::chrono::milliseconds(1000)));
    busy.join();
    EXPECT_TRUE(busy.error().empty()) << "another session was disturbed: " << busy.error();
    RecordProperty("sampler_restart_ms", std::to_string(ms));
}

TEST_F(Sampling, ReadersDoNotHangWithoutASampler) {
    freeze_sampler();
    // With the sampler idle (or gone) every reader still answers at once.
    auto t0 = std::chrono::steady_clock::now();
    exec(*admin, "SELECT count(*) FROM pg_stat_waits_history");
    exec(*admin, "SELECT count(*) FROM pg_stat_waits_profile");
    exec(*admin, "SELECT count(*) FROM pg_stat_waits_top('1 day')");
    exec(*admin, "SELECT count(*) FROM pg_stat_waits_timeline('1 day')");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST_F(Sampling, BadArgumentsAreRefused) {
    EXPECT_THROW(exec(*admin, "SELECT * FROM pg_stat_waits_top('-5 min')"), pqxx::sql_error);
    EXPECT_THROW(exec(*admin, "SELECT * FROM pg_stat_waits_top('5 min', 0)"), pqxx::sql_error);
    EXPECT_THROW(exec(*admin, "SELECT * FROM pg_stat_waits_timeline('1 hour', '0 s')"), pqxx::sql_error);
    EXPECT_THROW(exec(*admin, "SELECT * FROM pg_stat_waits_timeline('1 hour', '1 month')"), pqxx::sql_error);
}

}  // namespace

// ---- a portal fetched in batches through the extended protocol ----------------
// libpq cannot Execute with a row limit, so this speaks the v3 protocol
// itself over the server's Unix socket (trust authentication in tests).
namespace {

std::string conn_param(const std::string &key) {
    std::string ci = conninfo();
    size_t p = ci.find(key + "=");
    if (p == std::string::npos) return "";
    p += key.size() + 1;
    size_t e = ci.find(' ', p);
    return ci.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

class RawConnection {
public:
    bool open() {
        std::string host = conn_param("host"), port = conn_param("port");
        if (host.empty() || host[0] != '/') return false;
        std::string path = host + "/.s.PGSQL." + port;
        fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        if (path.size() >= sizeof(addr.sun_path)) return false;
        std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
        if (connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) return false;
        std::string body;
        put32(&body, 196608);
        body += std::string("user\0", 5) + conn_param("user") + '\0' + std::string("database\0", 9) + conn_param("dbname") + '\0' + '\0';
        std::string msg;
        put32(&msg, static_cast<uint32_t>(body.size() + 4));
        send_all(msg + body);
        return until_ready();
    }
    ~RawConnection() {
        if (fd_ >= 0) close(fd_);
    }
    void message(char type, const std::string &body) {
        std::string m(1, type);
        put32(&m, static_cast<uint32_t>(body.size() + 4));
        send_all(m + body);
    }
    // Reads until ReadyForQuery; counts DataRow messages; false on ErrorResponse.
    bool until_ready(int *rows = nullptr) {
        bool ok = true;
        for (;;) {
            char type;
            std::string body;
            if (!read_message(&type, &body)) return false;
            if (type == 'E') ok = false;
            if (type == 'D' && rows) (*rows)++;
            if (type == 'Z') return ok;
        }
    }
    static void put32(std::string *s, uint32_t v) {
        for (int i = 3; i >= 0; i--) s->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }

private:
    void send_all(const std::string &s) {
        size_t off = 0;
        while (off < s.size()) {
            ssize_t n = ::send(fd_, s.data() + off, s.size() - off, 0);
            if (n <= 0) return;
            off += static_cast<size_t>(n);
        }
    }
    bool read_exact(char *buf, size_t n) {
        size_t off = 0;
        while (off < n) {
            ssize_t r = ::recv(fd_, buf + off, n - off, 0);
            if (r <= 0) return false;
            off += static_cast<size_t>(r);
        }
        return true;
    }
    bool read_message(char *type, std::string *body) {
        char head[5];
        if (!read_exact(head, 5)) return false;
        *type = head[0];
        uint32_t len = 0;
        for (int i = 1; i < 5; i++) len = (len << 8) | static_cast<unsigned char>(head[i]);
        body->resize(len - 4);
        return len == 4 || read_exact(&(*body)[0], len - 4);
    }
    int fd_ = -1;
};

TEST_F(Sampling, PortalFetchedInBatchesIsAttributedToItsStatement) {
    RawConnection raw;
    ASSERT_TRUE(raw.open()) << "needs a Unix-socket host in PSW_CONNINFO";
    raw.message('Q', std::string("BEGIN") + '\0');
    ASSERT_TRUE(raw.until_ready());
    int pid = *scalar<int>(*admin, "SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction' "
                                   "AND backend_type = 'client backend' AND query = 'BEGIN' ORDER BY backend_start DESC LIMIT 1");
    const std::string sql = "SELECT g, pg_sleep(0.02) FROM generate_series(1, 60) g /* it_portal */";
    raw.message('P', std::string("\0", 1) + sql + '\0' + std::string("\0\0", 2));
    raw.message('B', std::string("p1\0", 3) + std::string("\0", 1) + std::string("\0\0\0\0\0\0", 6));
    int rows = 0;
    for (int batch = 0; batch < 4; batch++) {
        std::string exec_body("p1\0", 3);
        RawConnection::put32(&exec_body, 15);
        raw.message('E', exec_body);
        raw.message('S', "");
        ASSERT_TRUE(raw.until_ready(&rows));
        // Idle in transaction between fetches, as a driver with a fetch size is.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(rows, 60);
    raw.message('Q', std::string("COMMIT") + '\0');
    ASSERT_TRUE(raw.until_ready());
    auto queryid = scalar<long long>(*admin, "SELECT queryid FROM pg_stat_statements WHERE query LIKE "
                                             "'SELECT g, pg_sleep($1) FROM generate_series($2, $3) g /* it_portal */' LIMIT 1");
    ASSERT_TRUE(queryid.has_value());
    pqxx::result r = exec(*admin, "SELECT count(*), count(*) FILTER (WHERE queryid = " + std::to_string(*queryid) +
                                      ") FROM pg_stat_waits_history WHERE pid = " + std::to_string(pid) +
                                      " AND wait_event = 'PgSleep'");
    long long sleeping = r[0][0].as<long long>();
    EXPECT_GE(sleeping, 1200 / period_ms * 0.8) << "60 x 20 ms of pg_sleep";
    EXPECT_EQ(r[0][1].as<long long>(), sleeping) << "fetch batches not attributed to the portal's statement";
    long long between = *scalar<long long>(*admin, "SELECT count(*) FROM pg_stat_waits_history WHERE pid = " + std::to_string(pid) +
                                                       " AND state = 'idle in transaction' AND queryid IS DISTINCT FROM " +
                                                       std::to_string(*queryid) + " AND sample_time > (SELECT min(sample_time) FROM pg_stat_waits_history WHERE pid = " +
                                                       std::to_string(pid) + " AND wait_event = 'PgSleep')");
    EXPECT_EQ(between, 0) << "idle-in-transaction between fetches lost the statement's id";
}

}  // namespace
