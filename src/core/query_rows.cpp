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

void cpu_rows_from_elapsed(QueryRow *rows, uint32_t m, uint16_t cpu_index) {
    auto same_statement = [](const QueryKey &a, const QueryKey &b) {
        return a.queryid == b.queryid && a.datid == b.datid && a.userid == b.userid &&
               a.backend_type == b.backend_type;
    };
    for (uint32_t g = 0; g < m;) {
        uint32_t end = g;
        uint64_t waits_ns = 0;
        for (; end < m && same_statement(rows[g].key, rows[end].key); end++)
            if (rows[end].key.index != cpu_index) waits_ns += rows[end].total_ns;
        for (uint32_t i = g; i < end; i++)
            if (rows[i].key.index == cpu_index)
                rows[i].total_ns = rows[i].total_ns > waits_ns ? rows[i].total_ns - waits_ns : 0;
        g = end;
    }
}

}  // namespace psw
