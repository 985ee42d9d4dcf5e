// Helpers for integration tests: real sessions on a real, preloaded server.
// PSW_CONNINFO (set by ./run test) says where the server is.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <thread>

namespace psw_it {

inline std::string conninfo() {
    const char *c = std::getenv("PSW_CONNINFO");
    return c ? c : "dbname=postgres";
}

inline std::unique_ptr<pqxx::connection> connect(const std::string &extra = "") {
    return std::make_unique<pqxx::connection>(conninfo() + (extra.empty() ? "" : " " + extra));
}

// Runs one statement in autocommit mode and returns the result.
inline pqxx::result exec(pqxx::connection &c, const std::string &sql) {
    pqxx::nontransaction tx(c);
    pqxx::result r = tx.exec(sql);
    tx.commit();
    return r;
}

template <typename T>
std::optional<T> scalar(pqxx::connection &c, const std::string &sql) {
    pqxx::result r = exec(c, sql);
    if (r.empty() || r[0][0].is_null()) return std::nullopt;
    return r[0][0].as<T>();
}

inline int backend_pid(pqxx::connection &c) { return *scalar<int>(c, "SELECT pg_backend_pid()"); }

// Polls until pred() holds or the timeout passes; returns whether it held.
inline bool wait_until(const std::function<bool()> &pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
}

// A statement running on its own connection in a background thread; its
// error (if any, e.g. after a cancel) is kept for the test to inspect.
class Background {
public:
    Background(pqxx::connection &c, std::string sql) : sql_(std::move(sql)) {
        thread_ = std::thread([this, &c] {
            try {
                exec(c, sql_);
            } catch (const std::exception &e) {
                error_ = e.what();
            }
        });
    }
    ~Background() {
        if (thread_.joinable()) thread_.join();
    }
    void join() { thread_.join(); }
    const std::string &error() const { return error_; }

private:
    std::string sql_;
    std::string error_;
    std::thread thread_;
};

}  // namespace psw_it
