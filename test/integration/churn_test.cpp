// Connection churn: slots must follow processes exactly — no leaked slots,
// no rows for exited pids, the same set of processes as pg_stat_activity.
#include <atomic>
#include <set>
#include <vector>

#include "harness.h"

using namespace psw_it;

namespace {

int env_int(const char *name, int fallback) {
    const char *v = std::getenv(name);
    return v ? std::atoi(v) : fallback;
}

std::set<int> pids(pqxx::connection &c, const std::string &sql) {
    std::set<int> out;
    for (const auto &row : exec(c, sql)) out.insert(row[0].as<int>());
    return out;
}

TEST(Churn, SlotsFollowConnectionsOpeningAndClosing) {
    // Default: a short churn; ./run test --long runs 1000 connections for 60 s.
    const int concurrent = env_int("PSW_CHURN_CONNECTIONS", 40);
    const int seconds = env_int("PSW_CHURN_SECONDS", 3);
    const int threads = 4;
    auto admin = connect();
    exec(*admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_waits");

    std::atomic<long> opened{0}, failures{0}, markers{0};
    std::atomic<long long> marker_id{0};
    const std::string kMarker =
        "SELECT queryid, 'psw-churn-marker' FROM pg_stat_waits_activity WHERE pid = pg_backend_pid()";
    const bool timing = scalar<std::string>(*admin, "SELECT array_length(interposed, 1) > 0 FROM pg_stat_waits_status")
                            .value_or("f") == "t";
    // The marker's id (this session has timing off, so this run is not counted).
    marker_id = exec(*admin, kMarker)[0][0].as<long long>();
    auto count_markers = [&] {
        return scalar<long>(*admin, "SELECT coalesce(sum(calls), 0) FROM pg_stat_waits_queries WHERE queryid = " +
                                        std::to_string(marker_id.load()) + " AND wait_event_type = 'CPU'")
            .value_or(-1);
    };
    const long before = timing ? count_markers() : 0;
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++) {
        workers.emplace_back([&, t] {
            std::vector<std::unique_ptr<pqxx::connection>> held;
            const size_t share = static_cast<size_t>(concurrent / threads);
            size_t next = 0;
            while (!stop) {
                try {
                    auto c = connect("application_name=psw_churn options='-c pg_stat_waits.timing=on'");
                    opened++;
                    // Every connection runs the marker once: its executions
                    // must all be counted once the connections are gone.
                    exec(*c, kMarker);
                    markers++;
                    if (held.size() < share) {
                        held.push_back(std::move(c));
                    } else {
                        held[next] = std::move(c);  // closes the oldest one
                        next = (next + 1) % share;
                    }
                } catch (const std::exception &) {
                    failures++;
                }
            }
            (void)t;
        });
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    long checks = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        // While churning, no pid may appear in our view that PostgreSQL does not know.
        std::set<int> ours = pids(*admin, "SELECT pid FROM pg_stat_waits_activity");
        std::set<int> all_procs = pids(*admin, "SELECT pid FROM pg_stat_activity");
        for (int p : ours)
            if (!all_procs.count(p)) {
                // Could have exited between the two reads: it must be gone now.
                auto alive = scalar<long>(*admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(p));
                auto still = scalar<long>(*admin, "SELECT count(*) FROM pg_stat_waits_activity WHERE pid = " + std::to_string(p));
                EXPECT_EQ(alive.value_or(0), still.value_or(0)) << "pid " << p;
            }
        checks++;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    stop = true;
    for (auto &w : workers) w.join();
    EXPECT_GT(opened.load(), concurrent);
    EXPECT_EQ(failures.load(), 0);

    // All churn connections are closed now: wait for their backends to exit,
    // then the two views must list exactly the same processes.
    ASSERT_TRUE(wait_until([&] {
        return scalar<long>(*admin, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'psw_churn'") == 0L;
    }, std::chrono::seconds(30)));
    std::set<int> ours = pids(*admin, "SELECT pid FROM pg_stat_waits_activity");
    std::set<int> theirs = pids(*admin, "SELECT pid FROM pg_stat_activity");
    EXPECT_EQ(ours, theirs);

    // No counter lost: exact timing counted every marker statement, each
    // flushed by its backend at statement end or exit.
    if (timing) {
        const long counted = count_markers() - before;
        EXPECT_EQ(counted, markers.load()) << "statements counted by exact timing";
        std::printf("churn: %ld marker statements run, %ld counted by exact timing\n", markers.load(), counted);
    }
    RecordProperty("connections_opened", static_cast<int>(opened.load()));
    std::printf("churn: %ld connections opened, %ld view checks, %d seconds\n", opened.load(), checks, seconds);
}

}  // namespace
