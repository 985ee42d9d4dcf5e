// The per-query view's rows from the shared per-query table, PostgreSQL-free.
//
// The table holds, per (queryid, datid, userid, backend type), one entry per wait event
// (calls, time) and one CPU entry (calls = executions, time = the statement's
// own elapsed time). A writer that raced a claim may have inserted a key
// twice. The view shows each key once and the CPU row as elapsed minus that
// statement's waits, so a statement's rows add up to its elapsed time. Calls
// that never block (non-blocking socket calls) are not waits: their time
// stays in the CPU row and they get no row of their own.
#pragma once

#include <cstdint>

#include "timing_stats.h"

namespace psw {

// Sorts rows by key, merges duplicate keys, drops rows whose index
// is_cpu_work(index) says is CPU work, and turns each statement's CPU row
// (index cpu_index) into elapsed - waits (clamped at 0: waits of a statement
// still running are flushed before its elapsed time). Returns the number of
// rows kept at the front of rows.
template <typename IsCpuWork>
uint32_t finish_query_rows(QueryRow *rows, uint32_t n, uint16_t cpu_index, IsCpuWork &&is_cpu_work);

// Order of finish_query_rows: queryid, datid, userid, backend type, index.
bool query_row_less(const QueryRow &a, const QueryRow &b);
void sort_query_rows(QueryRow *rows, uint32_t n);

template <typename IsCpuWork>
uint32_t finish_query_rows(QueryRow *rows, uint32_t n, uint16_t cpu_index, IsCpuWork &&is_cpu_work) {
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
    // A statement's CPU row is written by the backend that ran it; waits of
    // other backend types under the same id (parallel workers) are their
    // own rows and are not taken out of it.
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
    return m;
}

}  // namespace psw
