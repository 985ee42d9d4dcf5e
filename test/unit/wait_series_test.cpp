// The table of renamed waits (tools/report/wait_series.cpp): its shape, and
// that exporters/postgres_exporter/queries.yaml, which repeats it in SQL for
// postgres_exporter, names the same series for the same events.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "wait_series.h"

using namespace psw_report;

namespace {

using Name = std::tuple<std::string, std::string, std::string>;  // type, event, series

std::string lower(std::string s) {
    for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// 17's camel-cased name back to its enum's snake_case: WalSenderWaitForWal
// -> wal_sender_wait_for_wal (17 upper-cases only each word's first letter).
std::string snake(const std::string &camel) {
    std::string out;
    for (char c : camel) {
        if (std::isupper(static_cast<unsigned char>(c)) && !out.empty()) out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::set<Name> cpp_table() {
    std::set<Name> s;
    for (const auto &r : renamed_waits()) s.insert({r.type, r.event, r.series});
    return s;
}

// A file of the checkout, found from this file's path (CMake compiles it by
// its absolute path, in the checkout or in ./run's copy of it); "" if absent.
std::string checkout_file(const std::string &path) {
    std::string here = __FILE__;
    std::string root = here.substr(0, here.rfind("/test/unit/"));
    std::ifstream in(root + "/" + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Each top-level query of the file that yields wait_series -> the
// ('type', 'event', 'series') rows of its VALUES list.
std::map<std::string, std::multiset<Name>> yaml_tables(const std::string &yaml) {
    std::map<std::string, std::multiset<Name>> out;
    std::istringstream in(yaml);
    std::string line, key, query;
    const std::regex top(R"(^([a-z_0-9]+):\s*$)"), row(R"(\('(\w+)', '(\w+)', '(\w+)'\))");
    auto flush = [&] {
        if (key.empty() || query.find(" AS wait_series") == std::string::npos) return;
        auto &t = out[key];
        for (std::sregex_iterator it(query.begin(), query.end(), row), end; it != end; ++it)
            t.insert({(*it)[1], (*it)[2], (*it)[3]});
    };
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, top)) {
            flush();
            key = m[1];
            query.clear();
        } else if (!line.empty() && line[0] == ' ') {
            query += line + "\n";
        }
    }
    flush();
    return out;
}

}  // namespace

TEST(WaitSeries, SeventeensRenamesAreCaseOnlyWithTheEnumsSnakeCase) {
    std::map<std::string, std::set<std::string>> names;  // series -> names
    int old17 = 0, new17 = 0;
    for (const auto &r : renamed_waits()) {
        if (r.renamed_in != 17) continue;
        (r.new_name ? new17 : old17)++;
        names[r.series].insert(r.event);
        if (r.new_name) {
            EXPECT_EQ(snake(r.event), r.series) << r.event;
        }
        EXPECT_EQ(std::string(r.merged_type), r.type) << "17 renamed no class";
    }
    EXPECT_EQ(old17, 41);
    EXPECT_EQ(new17, 41);
    EXPECT_EQ(names.size(), 41u);
    for (const auto &kv : names) {
        ASSERT_EQ(kv.second.size(), 2u) << kv.first << ": 16's name and 17's";
        EXPECT_EQ(lower(*kv.second.begin()), lower(*kv.second.rbegin())) << kv.first << ": a change of case only";
    }
}

TEST(WaitSeries, EveryNameOnceAndFoundByItsExactSpelling) {
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto &r : renamed_waits()) {
        EXPECT_TRUE(seen.insert({r.type, r.event}).second) << r.type << "/" << r.event << " twice";
        const RenamedWait *f = find_renamed_wait(r.type, r.event);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f, &r);
        EXPECT_STREQ(wait_series(r.type, r.event), r.series);
    }
    EXPECT_EQ(renamed_waits().size(), 41u * 2 + 6) << "41 events 17 renamed, 6 buffer-wait names of 15-19";
    EXPECT_EQ(wait_series("IO", "WALSYNC"), nullptr);
    EXPECT_EQ(wait_series("LWLock", "WALWrite"), nullptr);
    EXPECT_EQ(wait_series("IO", "WalSync"), std::string("wal_sync"));
    EXPECT_EQ(wait_series("IO", "WALSync"), std::string("wal_sync"));
}

// Both wait_series queries of queries.yaml carry exactly the C++ table
// (test/t/021_exporters.pl runs them on a server, so the SQL itself is real).
TEST(WaitSeries, PostgresExporterQueriesRepeatTheTable) {
    std::string yaml = checkout_file("exporters/postgres_exporter/queries.yaml");
    ASSERT_FALSE(yaml.empty()) << "exporters/postgres_exporter/queries.yaml not found from " << __FILE__;
    auto tables = yaml_tables(yaml);
    EXPECT_EQ(tables.size(), 2u) << "pg_stat_waits_sampled and pg_stat_waits_timed";
    EXPECT_EQ(tables.count("pg_stat_waits_sampled"), 1u);
    EXPECT_EQ(tables.count("pg_stat_waits_timed"), 1u);
    std::set<Name> cpp = cpp_table();
    for (const auto &kv : tables) {
        std::set<Name> sql(kv.second.begin(), kv.second.end());
        EXPECT_EQ(sql.size(), kv.second.size()) << kv.first << ": a row repeated";
        for (const auto &n : cpp)
            EXPECT_EQ(sql.count(n), 1u) << kv.first << " lacks ('" << std::get<0>(n) << "', '" << std::get<1>(n)
                                        << "', '" << std::get<2>(n) << "')";
        for (const auto &n : sql)
            EXPECT_EQ(cpp.count(n), 1u) << kv.first << " has ('" << std::get<0>(n) << "', '" << std::get<1>(n) << "', '"
                                        << std::get<2>(n) << "'), wait_series.cpp does not";
    }
}

// docs/exporters.md's mapping table lists every name of the C++ table, on the
// side of the rename the table says, and nothing else.
TEST(WaitSeries, DocsTableListsEveryName) {
    std::string md = checkout_file("docs/exporters.md");
    ASSERT_FALSE(md.empty()) << "docs/exporters.md not found from " << __FILE__;
    using DocName = std::tuple<std::string, std::string, std::string, int, bool>;  // type, event, series, in, new
    std::set<DocName> docs, cpp;
    for (const auto &r : renamed_waits()) cpp.insert({r.type, r.event, r.series, r.renamed_in, r.new_name});
    const std::regex row(R"(^\| `(\w+)` \| (\d+) \| (.*) \| (.*) \|$)"), name(R"(`(\w+)/(\w+)`)");
    std::istringstream in(md);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (!std::regex_match(line, m, row)) continue;
        std::string series = m[1], before = m[3], after = m[4];
        int in_release = std::stoi(m[2]);
        for (const auto *side : {&before, &after})
            for (std::sregex_iterator it(side->begin(), side->end(), name), end; it != end; ++it)
                docs.insert({(*it)[1], (*it)[2], series, in_release, side == &after});
    }
    EXPECT_EQ(docs, cpp) << "docs/exporters.md's table of renamed waits differs from wait_series.cpp (" << docs.size()
                         << " names there, " << cpp.size() << " here)";
}

// The dashboards' buffer panels select the buffer series by name, and the
// panel of 17's renames leaves out exactly those: every wait_series regex
// matcher (=~ or !~) of both dashboards lists 19's series and nothing else
// (a pattern like buffer_.* would also take 17's buffer_io).
TEST(WaitSeries, DashboardsSelectBufferWaitsByName) {
    std::set<std::string> buffer_series;
    for (const auto &r : renamed_waits())
        if (r.renamed_in == 19) buffer_series.insert(r.series);
    const std::regex matcher(R"re(wait_series(=~|!~)\\"([^\\"]*)\\")re");
    for (const char *path :
         {"exporters/grafana/pg_stat_waits.json", "exporters/postgres_exporter/grafana_dashboard.json"}) {
        std::string json = checkout_file(path);
        ASSERT_FALSE(json.empty()) << path << " not found from " << __FILE__;
        int selects = 0, excludes = 0;
        for (std::sregex_iterator it(json.begin(), json.end(), matcher), end; it != end; ++it) {
            ((*it)[1] == "=~" ? selects : excludes)++;
            std::set<std::string> named;
            std::stringstream alternatives((*it)[2]);
            for (std::string s; std::getline(alternatives, s, '|');) named.insert(s);
            EXPECT_EQ(named, buffer_series) << path << ": " << (*it)[0];
        }
        EXPECT_EQ(selects, 2) << path << ": the buffer panel's sampled and exact queries";
        EXPECT_EQ(excludes, 2) << path << ": the 17 renames panel's sampled and exact queries";
    }
}
