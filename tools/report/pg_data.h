// Reading pg_stat_waits over libpqxx. Which objects exist is looked up in
// pg_catalog at run time (members of the installed extension), so one
// binary works against any build of the extension: a missing view becomes
// an unavailable section, not a failed report.
#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <set>
#include <stdexcept>
#include <string>

#include "cli.h"
#include "load_model.h"
#include "model.h"

namespace psw_report {

// Connection failed or the extension is not usable; what() is for the user
// of the command line: summary, then ": " and the library's (libpq's,
// PostgreSQL's) detail when there is one. serve's pages show the summary
// alone and log what(): no library's text goes to an HTTP client.
struct FatalError : std::runtime_error {
    explicit FatalError(const std::string &summary, const std::string &detail = "")
        : std::runtime_error(detail.empty() ? summary : summary + ": " + detail), summary(summary) {}
    std::string summary;
};

// The request's own values are wrong (a time the server cannot read, a
// window that ends before it starts): a 400 on serve's pages.
struct InputError : FatalError {
    using FatalError::FatalError;
};

// libpq keyword/value string from the options; -d may itself be a
// connection string or URI, whose settings -h/-p/-U then override.
std::string build_conninfo(const Options &o, const std::string &application_name = "pg_stat_waits_report");
// SQL listing the names of an extension's member relations and functions;
// quoted_oid is the extension's oid as a quoted SQL literal.
std::string extension_members_sql(const std::string &quoted_oid);

class Server {
public:
    explicit Server(const Options &o);  // throws FatalError
    ~Server();

    bool has(const std::string &object) const { return objects_.count(object) != 0; }
    // Schema-qualified, quoted name of an extension object.
    std::string qualified(const std::string &object) const;

    ReportData read_report(const Options &o);
    TopSnapshot read_top();

    // pg_window.cpp: the window's load, top SQL, blocking sessions and the
    // comparison with a baseline window, into d.load.
    void read_load(const Options &o, ReportData &d);
    double epoch_of(const std::string &text);  // throws FatalError
    // The window's samples: the history ring when it reaches the window's
    // start (or, history_only, the part it holds), else the minute buckets.
    SampleSet read_samples(const Window &w, double bucket_s, bool history_only = false);

private:
    void read_blocking(LoadSections &ls, int n);
    void read_statement_details(LoadSections &ls);
    pqxx::connection &conn();
    const std::string &pgss_schema() const { return pgss_schema_; }

    struct Conn;  // holds the pqxx::connection (a typedef in libpqxx 6, not forward-declarable)
    std::unique_ptr<Conn> holder_;
    std::string schema_;       // where pg_stat_waits is installed
    std::string pgss_schema_;  // pg_stat_statements, "" when absent
    std::set<std::string> objects_;
    std::string label_;
};

}  // namespace psw_report
