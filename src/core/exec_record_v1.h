// The slow-execution record as version 1 of the statistics file's "execs"
// section saved it (pg_stat_waits 1.2 and before: no Citus global pids), and
// its conversion to the current record, so an upgrade keeps the slow runs a
// server saved at its last shutdown (PostgreSQL-free, unit-tested).
#pragma once

#include <cstring>
#include <type_traits>

#include "executions.h"

namespace psw {

struct LockBlockerV1 {
    int32_t pid;
    uint8_t state;
    uint32_t wait_event_info;
    uint32_t usesysid;
    uint64_t queryid;
};

struct LockBlockersV1 {
    int64_t query_start;
    int64_t seen_at;
    uint32_t count;
    LockBlockerV1 blockers[kMaxLockBlockers];
};

struct ExecRecordV1 {
    int64_t started;
    int64_t ended;
    int32_t pid;
    uint32_t datid;
    uint32_t userid;
    uint16_t nwaits;
    uint16_t rest_events;
    uint64_t queryid;
    uint64_t elapsed_ns;
    uint64_t wait_ns;
    StatementWait waits[kExecWaits];
    uint64_t rest_calls;
    uint64_t rest_ns;
    LockBlockersV1 blockers;
    uint32_t text_len;
    char text[kExecTextMax];
};
static_assert(std::is_trivially_copyable<ExecRecordV1>::value, "read from a file as bytes");

// The record old was, with no gpid (0) for itself and its blockers.
inline void exec_record_from_v1(const ExecRecordV1 &old, ExecRecord *r) {
    std::memset(static_cast<void *>(r), 0, sizeof(*r));
    r->started = old.started;
    r->ended = old.ended;
    r->pid = old.pid;
    r->datid = old.datid;
    r->userid = old.userid;
    r->nwaits = old.nwaits;
    r->rest_events = old.rest_events;
    r->queryid = old.queryid;
    r->elapsed_ns = old.elapsed_ns;
    r->wait_ns = old.wait_ns;
    std::memcpy(r->waits, old.waits, sizeof(r->waits));
    r->rest_calls = old.rest_calls;
    r->rest_ns = old.rest_ns;
    r->blockers.query_start = old.blockers.query_start;
    r->blockers.seen_at = old.blockers.seen_at;
    r->blockers.count = old.blockers.count;
    for (int i = 0; i < kMaxLockBlockers; i++) {
        const LockBlockerV1 &o = old.blockers.blockers[i];
        LockBlocker &b = r->blockers.blockers[i];
        b.pid = o.pid;
        b.state = o.state;
        b.wait_event_info = o.wait_event_info;
        b.usesysid = o.usesysid;
        b.queryid = o.queryid;
    }
    r->text_len = old.text_len;
    std::memcpy(r->text, old.text, sizeof(r->text));
}

}  // namespace psw
