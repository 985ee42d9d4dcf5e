// serve's live report page (/report/NAME): the same report as `report
// --html`, generated on each request for the window, slice and comparison
// named in the query string.
#pragma once

#include <string>

namespace psw_report {

struct PageReply {
    int status = 200;
    std::string content_type = "text/html; charset=utf-8";
    std::string body;
};

// path: the page's own path (links on the page keep it); query: the raw
// query string (window=5min|1h|1d|DURATION, from, to, slice, compare,
// queryid); conninfo: the target's libpq connection string.
PageReply live_report_page(const std::string &path, const std::string &query, const std::string &conninfo, int top_n);

}  // namespace psw_report
