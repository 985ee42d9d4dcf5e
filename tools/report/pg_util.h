// Small libpqxx helpers shared by the readers (pg_data.cpp, pg_window.cpp,
// exporter.cpp): one statement outside a transaction block, NULL-tolerant
// field reads, and the first line of a server error for a message.
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>

namespace psw_report {

// Runs one statement outside any transaction block, so that a failing
// section does not abort the others.
inline pqxx::result run_sql(pqxx::connection &c, const std::string &sql) {
    pqxx::nontransaction tx(c);
    return tx.exec(sql);
}

inline std::string str(const pqxx::field &f) { return f.is_null() ? std::string() : std::string(f.c_str()); }
inline double dbl(const pqxx::field &f) { return f.is_null() ? 0.0 : f.as<double>(); }
inline int64_t i64(const pqxx::field &f) { return f.is_null() ? 0 : f.as<int64_t>(); }

inline std::string first_line(const std::string &msg) {
    std::string m = msg.substr(0, msg.find('\n'));
    if (m.rfind("ERROR:  ", 0) == 0) m = m.substr(8);
    return m;
}

}  // namespace psw_report
