#include "query_rows.h"
#include "wait_catalog.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace psw;

QueryRow row(uint64_t q, uint16_t idx, uint64_t calls, uint64_t ns) {
    QueryRow r{};
    r.key = QueryKey{q, 5, 10, idx};
    r.calls = calls;
    r.total_ns = ns;
    return r;
}

TEST(QueryRows, DuplicatesMergeAndCpuWorkIsDropped) {
    const uint16_t cpu = wait_index(0);
    const uint16_t sleep = wait_index(wait_info_make(kClassTimeout, 0));
    const uint16_t send = unreported_index(kCallSend);
    const uint16_t pread = unreported_index(kCallPread);
    std::vector<QueryRow> rows = {
        row(2, cpu, 1, 100), row(1, sleep, 5, 1000), row(1, cpu, 5, 90), row(1, sleep, 1, 10),
        row(1, send, 7, 30), row(1, pread, 2, 40),   row(2, sleep, 1, 500),
    };
    uint32_t m = finish_query_rows(rows.data(), static_cast<uint32_t>(rows.size()), index_is_cpu_work);
    ASSERT_EQ(m, 5u);
    // Sorted by queryid then index; send dropped (CPU work, already inside CPU).
    EXPECT_EQ(rows[0].key.queryid, 1u);
    for (uint32_t i = 0; i < m; i++) {
        EXPECT_NE(rows[i].key.index, send);
        if (i > 0) {
            EXPECT_TRUE(query_row_less(rows[i - 1], rows[i]));
        }
        // Every row shows what its entry holds: CPU time is not reduced by
        // the same statement's waits (a reader never subtracts).
        if (rows[i].key.index == cpu) {
            EXPECT_EQ(rows[i].total_ns, rows[i].key.queryid == 1 ? 90u : 100u);
        }
        if (rows[i].key.queryid == 1 && rows[i].key.index == sleep) {
            EXPECT_EQ(rows[i].calls, 6u);
            EXPECT_EQ(rows[i].total_ns, 1010u);
        }
    }
}

// A saved table whose CPU entries held elapsed time (timing format 2).
TEST(QueryRows, ElapsedCpuRowsLoseTheirOwnWaits) {
    const uint16_t cpu = wait_index(0);
    const uint16_t sleep = wait_index(wait_info_make(kClassTimeout, 0));
    const uint16_t pread = unreported_index(kCallPread);
    std::vector<QueryRow> rows = {
        row(2, cpu, 1, 100), row(1, sleep, 5, 1000), row(1, cpu, 5, 1100), row(1, pread, 2, 40), row(2, sleep, 1, 500),
    };
    uint32_t m = finish_query_rows(rows.data(), static_cast<uint32_t>(rows.size()), index_is_cpu_work);
    cpu_rows_from_elapsed(rows.data(), m, cpu);
    uint64_t q1_total = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (rows[i].key.queryid == 1) q1_total += rows[i].total_ns;
        if (rows[i].key.index == cpu) {
            EXPECT_EQ(rows[i].total_ns, rows[i].key.queryid == 1 ? 60u : 0u);
        }
    }
    EXPECT_EQ(q1_total, 1100u) << "waits + CPU = elapsed";
}

TEST(QueryRows, OnlyNonBlockingSocketCallsAreCpuWork) {
    for (int c = 0; c < kBlockingCallCount; c++) {
        auto call = static_cast<BlockingCall>(c);
        EXPECT_EQ(index_is_cpu_work(unreported_index(call)), call == kCallRecv || call == kCallSend)
            << blocking_call_name(call);
    }
    EXPECT_FALSE(index_is_cpu_work(wait_index(0)));
    EXPECT_FALSE(index_is_cpu_work(wait_index(wait_info_make(kClassClient, 0))));
}

}  // namespace
