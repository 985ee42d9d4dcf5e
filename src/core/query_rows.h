// The per-query view's rows from the shared per-query table, PostgreSQL-free.
//
// The table holds, per (queryid, datid, userid, backend type), one entry per
// wait event (calls, time) and one CPU entry (calls = executions, time = the
// statement's own CPU time: its elapsed time less its own waits, computed by
// the backend that ran it, statement_ledger.h). So a statement's rows add up
// to its elapsed time, and each row stays true on its own when the table
// evicts or drops another. A writer that raced a claim may have inserted a
// key twice; the view shows each key once. Calls that never block
// (non-blocking socket calls) are not waits: their time stays in the CPU
// row and they get no row of their own.
#pragma once

#include <cstdint>

#include "timing_stats.h"

namespace psw {

// Sorts rows by key, merges duplicate keys and drops rows whose index
// is_cpu_work(index) says is CPU work. Returns the number of rows kept at
// the front of rows.
template <typename IsCpuWork>
uint32_t finish_query_rows(QueryRow *rows, uint32_t n, IsCpuWork &&is_cpu_work);

// Rows saved by a build whose CPU entries held each statement's elapsed
// time (timing format 2), after finish_query_rows: turns each CPU row
// (index cpu_index) into its elapsed time less the same statement's waits
// (clamped at 0). Waits of other backend types under the same id (parallel
// workers) are their own rows and are not taken out of it.
void cpu_rows_from_elapsed(QueryRow *rows, uint32_t m, uint16_t cpu_index);

// Order of finish_query_rows: queryid, datid, userid, backend type, index.
bool query_row_less(const QueryRow &a, const QueryRow &b);
void sort_query_rows(QueryRow *rows, uint32_t n);

template <typename IsCpuWork>
uint32_t finish_query_rows(QueryRow *rows, uint32_t n, IsCpuWork &&is_cpu_work) {
    sort_query_rows(rows, n);
    auto same_key = [](const QueryKey &a, const QueryKey &b) {
        return a.queryid == b.queryid && a.datid == b.datid && a.userid == b.userid &&
               a.backend_type == b.backend_type && a.index == b.index;
    };
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (is_cpu_work(rows[i].key.index)) continue;
        if (m > 0 && same_key(rows[m - 1].key, rows[i].key)) {
            rows[m - 1].calls += rows[i].calls;
            rows[m - 1].total_ns += rows[i].total_ns;
        } else {
            rows[m++] = rows[i];
        }
    }
    return m;
}

}  // namespace psw
