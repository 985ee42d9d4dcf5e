// pg_stat_waits_activity against real sessions: lock waits, cancel, nesting.
#include "harness.h"

using namespace psw_it;

namespace {

class Activity : public ::testing::Test {
protected:
    void SetUp() override {
        admin = connect();
        exec(*admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_waits");
        exec(*admin, "DROP TABLE IF EXISTS it_activity_rows");
        exec(*admin, "CREATE TABLE it_activity_rows (id int PRIMARY KEY, v int)");
        exec(*admin, "INSERT INTO it_activity_rows VALUES (1, 0)");
    }
    std::unique_ptr<pqxx::connection> admin;

    pqxx::row activity_of(int pid) {
        pqxx::result r = exec(*admin, "SELECT state, wait_event_type, wait_event, queryid, top_queryid "
                                      "FROM pg_stat_waits_activity WHERE pid = " + std::to_string(pid));
        EXPECT_EQ(r.size(), 1u) << "no activity row for pid " << pid;
        return r[0];
    }
};

TEST_F(Activity, RowLockWaitShowsLockEventStateAndQueryid) {
    auto holder = connect();
    auto blocked = connect();
    int blocked_pid = backend_pid(*blocked);

    pqxx::work hold(*holder);
    hold.exec("UPDATE it_activity_rows SET v = v + 1 WHERE id = 1");

    Background waiter(*blocked, "UPDATE it_activity_rows SET v = v + 10 WHERE id = 1");
    ASSERT_TRUE(wait_until([&] {
        return scalar<std::string>(*admin, "SELECT wait_event_type FROM pg_stat_waits_activity WHERE pid = " +
                                               std::to_string(blocked_pid)) == std::optional<std::string>("Lock");
    })) << "blocked session never showed a Lock wait";

    pqxx::row row = activity_of(blocked_pid);
    EXPECT_EQ(row["state"].as<std::string>(), "active");
    EXPECT_EQ(row["wait_event"].as<std::string>(), "transactionid");
    auto pgsa_id = scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity WHERE pid = " +
                                                 std::to_string(blocked_pid));
    ASSERT_TRUE(pgsa_id.has_value());
    ASSERT_FALSE(row["queryid"].is_null());
    EXPECT_EQ(row["queryid"].as<long long>(), *pgsa_id);
    EXPECT_EQ(row["top_queryid"].as<long long>(), *pgsa_id);

    exec(*admin, "SELECT pg_cancel_backend(" + std::to_string(blocked_pid) + ")");
    waiter.join();
    EXPECT_NE(waiter.error().find("canceling statement"), std::string::npos) << waiter.error();

    pqxx::row after = activity_of(blocked_pid);
    EXPECT_EQ(after["state"].as<std::string>(), "idle");
    EXPECT_TRUE(after["queryid"].is_null()) << "stale queryid after cancel";
    EXPECT_TRUE(after["top_queryid"].is_null());
    hold.abort();
}

TEST_F(Activity, IdleInTransactionKeepsLastStatementId) {
    auto session = connect();
    int pid = backend_pid(*session);
    pqxx::work tx(*session);
    tx.exec("SELECT count(*) FROM it_activity_rows");
    // The backend sends ReadyForQuery just before it starts waiting for the
    // next command: give it a moment to enter the ClientRead wait.
    ASSERT_TRUE(wait_until([&] {
        return !activity_of(pid)["wait_event"].is_null() &&
               activity_of(pid)["wait_event"].as<std::string>() == "ClientRead";
    }));
    pqxx::row row = activity_of(pid);
    EXPECT_EQ(row["state"].as<std::string>(), "idle in transaction");
    auto pgsa_id = scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity WHERE pid = " + std::to_string(pid));
    ASSERT_FALSE(row["queryid"].is_null());
    EXPECT_EQ(row["queryid"].as<long long>(), *pgsa_id);
    tx.abort();
    EXPECT_TRUE(wait_until([&] { return activity_of(pid)["state"].as<std::string>() == "idle"; }));
}

// A PL/pgSQL function: the outer call is the top-level statement; under
// track = all the inner statement is the queryid, as pg_stat_statements sees it.
TEST_F(Activity, NestedStatementUnderTrackAll) {
    exec(*admin, "CREATE OR REPLACE FUNCTION it_nested_sleep() RETURNS void LANGUAGE plpgsql AS "
                 "$$ BEGIN PERFORM pg_sleep(1.0); END $$");
    exec(*admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    for (const char *track : {"all", "top"}) {
        SCOPED_TRACE(track);
        auto session = connect();
        int pid = backend_pid(*session);
        exec(*session, std::string("SET pg_stat_waits.track = '") + track + "'");
        exec(*session, "SET pg_stat_statements.track = 'all'");
        Background call(*session, "SELECT it_nested_sleep()");
        ASSERT_TRUE(wait_until([&] {
            return scalar<std::string>(*admin, "SELECT wait_event FROM pg_stat_waits_activity WHERE pid = " +
                                                   std::to_string(pid)) == std::optional<std::string>("PgSleep");
        }));
        pqxx::row row = activity_of(pid);
        auto top = scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity WHERE pid = " + std::to_string(pid));
        ASSERT_TRUE(top.has_value());
        EXPECT_EQ(row["top_queryid"].as<long long>(), *top);
        long long qid = row["queryid"].as<long long>();
        call.join();
        ASSERT_EQ(call.error(), "");
        if (std::string(track) == "all") {
            EXPECT_NE(qid, *top);
            auto inner = scalar<long long>(*admin, "SELECT count(*) FROM pg_stat_statements WHERE queryid = " +
                                                       std::to_string(qid) + " AND query ILIKE '%pg_sleep%' "
                                                       "AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                                                       "AND query NOT ILIKE '%it_nested_sleep%'");
            EXPECT_EQ(inner.value_or(0), 1) << "inner queryid not known to pg_stat_statements";
        } else {
            EXPECT_EQ(qid, *top);
        }
    }
}

// Errors that PL/pgSQL catches must not disturb the outer statement's ids,
// and an error inside a savepoint must not leave stale ids behind.
TEST_F(Activity, CaughtErrorsAndSavepointsKeepIdsRight) {
    exec(*admin, "CREATE OR REPLACE FUNCTION it_caught_then_sleep() RETURNS void LANGUAGE plpgsql AS $$ "
                 "BEGIN BEGIN PERFORM 1/0; EXCEPTION WHEN division_by_zero THEN NULL; END; "
                 "PERFORM pg_sleep(1.0); END $$");
    auto session = connect();
    int pid = backend_pid(*session);
    std::string where = " WHERE pid = " + std::to_string(pid);
    auto wait_for_sleep = [&] {
        return wait_until([&] {
            return scalar<std::string>(*admin, "SELECT wait_event FROM pg_stat_waits_activity" + where) ==
                   std::optional<std::string>("PgSleep");
        });
    };
    {
        Background call(*session, "SELECT it_caught_then_sleep()");
        ASSERT_TRUE(wait_for_sleep());
        pqxx::row row = activity_of(pid);
        auto top = scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity" + where);
        EXPECT_EQ(row["state"].as<std::string>(), "active");
        EXPECT_EQ(row["top_queryid"].as<long long>(), *top);
        EXPECT_EQ(row["queryid"].as<long long>(), *top);
        call.join();
        EXPECT_EQ(call.error(), "");
    }
    // A failed statement inside a savepoint: aborted transaction, no ids.
    exec(*session, "BEGIN");
    exec(*session, "SAVEPOINT s1");
    EXPECT_THROW(exec(*session, "SELECT 1/0"), std::exception);
    pqxx::row failed = activity_of(pid);
    EXPECT_EQ(failed["state"].as<std::string>(), "idle in transaction");
    EXPECT_TRUE(failed["queryid"].is_null()) << "stale queryid after an error in a savepoint";
    exec(*session, "ROLLBACK TO SAVEPOINT s1");
    {
        Background sleeper(*session, "SELECT pg_sleep(1.0)");
        ASSERT_TRUE(wait_for_sleep());
        pqxx::row row = activity_of(pid);
        auto id = scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity" + where);
        EXPECT_EQ(row["state"].as<std::string>(), "active");
        ASSERT_FALSE(row["queryid"].is_null());
        EXPECT_EQ(row["queryid"].as<long long>(), *id);
        sleeper.join();
    }
    exec(*session, "COMMIT");
    EXPECT_EQ(activity_of(pid)["state"].as<std::string>(), "idle");
}

// The very first statement of a new session is attributed like any other.
TEST_F(Activity, FirstStatementOfASessionIsAttributed) {
    auto session = connect();
    Background first(*session, "SELECT pg_sleep(0.8), 'psw-first-statement'");
    std::optional<int> sleeper;
    ASSERT_TRUE(wait_until([&] {
        sleeper = scalar<int>(*admin, "SELECT pid FROM pg_stat_activity WHERE query LIKE '%psw-first-statement%' "
                                      "AND pid <> pg_backend_pid() AND wait_event = 'PgSleep'");
        return sleeper.has_value();
    }));
    pqxx::row row = activity_of(*sleeper);
    auto id = scalar<long long>(*admin, "SELECT query_id FROM pg_stat_activity WHERE pid = " + std::to_string(*sleeper));
    EXPECT_EQ(row["state"].as<std::string>(), "active");
    ASSERT_FALSE(row["queryid"].is_null()) << "first statement of a session lost its queryid";
    EXPECT_EQ(row["queryid"].as<long long>(), *id);
    first.join();
}

}  // namespace
