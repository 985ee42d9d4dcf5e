#include "query_rows.h"

#include <algorithm>

namespace psw {

bool query_row_less(const QueryRow &a, const QueryRow &b) {
    if (a.key.queryid != b.key.queryid) return a.key.queryid < b.key.queryid;
    if (a.key.datid != b.key.datid) return a.key.datid < b.key.datid;
    if (a.key.userid != b.key.userid) return a.key.userid < b.key.userid;
    if (a.key.backend_type != b.key.backend_type) return a.key.backend_type < b.key.backend_type;
    return a.key.index < b.key.index;
}

// std::sort neither allocates nor throws on trivially copyable rows, so it is
// safe below a PostgreSQL frame.
void sort_query_rows(QueryRow *rows, uint32_t n) { std::sort(rows, rows + n, query_row_less); }

}  // namespace psw
