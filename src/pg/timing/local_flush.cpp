// Exact timing's backend-local accumulation and its flush into the shared
// tables: the per-query CPU rows held between flushes, the flush points
// (the wait for the client, once a second, exit), and the wrappers' cold
// paths.
#include <sys/epoll.h>

#include "local.h"

namespace psw {

LocalTiming local_timing;
int64 last_flush_ns = 0;
bool exit_hook_registered = false;
BackendSlot *live_slot = nullptr;
uint64 pending_queryid = 0;
Oid pending_userid = InvalidOid;
TscClock tsc_clock = {false, 0, 0, 0};

int64 timing_now_ns() { return now_ns(); }
const char *timing_clock_name() { return tsc_clock.usable ? "tsc" : "clock_gettime"; }

// ---- per-query CPU rows ----------------------------------------------------------------
PendingCpuRow pending_cpu[kPendingCpuRows];
PendingCpuRow *last_cpu_row = &pending_cpu[0];
int pending_cpu_count = 0;
int64 last_cpu_flush_ns = 0;

uint32 seen_flush_request = 0;

static inline void set_rows_held(uint8_t held) {
    BackendSlot *s = my_live_slot();
    if (s != nullptr) __atomic_store_n(&s->cpu_rows_held, held, __ATOMIC_RELEASE);
}

void flush_cpu_rows(int64 now) {
    last_cpu_flush_ns = now;
    if (timing_shared != nullptr) {
        // A request made from here on asks for rows held after these.
        seen_flush_request = __atomic_load_n(&timing_shared->flush_request, __ATOMIC_ACQUIRE);
        QueryTable *qt = timing_query_table();
        const uint8_t btype = timing_backend_type();
        const uint16_t cpu = wait_index(0);
        for (int i = 0; i < pending_cpu_count; i++) {
            const PendingCpuRow &r = pending_cpu[i];
            qt->add(QueryKey{r.queryid, MyDatabaseId, r.userid, cpu, btype}, r.calls, r.ns);
        }
    }
    if (pending_cpu_count != 0) {
        BackendSlot *s = my_live_slot();
        if (s != nullptr) __atomic_store_n(&s->cpu_rows_answered, seen_flush_request, __ATOMIC_RELAXED);
        set_rows_held(0);
    }
    pending_cpu_count = 0;
    pending_cpu[0].queryid = 0;
    last_cpu_row = &pending_cpu[0];
}

// Another row than the last one added to: a held one, else a new one.
__attribute__((noinline)) void hold_other_cpu_row(uint64 queryid, Oid userid, uint64 calls, uint64 ns) {
    PendingCpuRow *r = nullptr;
    for (int i = 0; i < pending_cpu_count && r == nullptr; i++)
        if (pending_cpu[i].queryid == queryid && pending_cpu[i].userid == userid) r = &pending_cpu[i];
    if (r == nullptr) {
        if (pending_cpu_count == kPendingCpuRows) flush_cpu_rows(now_ns());
        if (pending_cpu_count == 0) set_rows_held(1);
        r = &pending_cpu[pending_cpu_count++];
        *r = PendingCpuRow{queryid, userid, 0, 0};
    }
    r->calls += calls;
    r->ns += ns;
    last_cpu_row = r;
}

void flush(int64 now) {
    if (pending_cpu_count != 0) flush_cpu_rows(now);
    flush_waits(now);
}

void flush_waits(int64 now) {
    last_flush_ns = now;
    if (!local_timing.pending()) return;
    TimingShared *ts = timing_shared;
    if (ts == nullptr) {
        local_timing.drain([](uint16_t, const EventCounters &, uint64_t, uint64_t) {});
        return;
    }
    QueryTable *qt = timing_query_table();
    const uint64 qid = pending_queryid;
    const Oid dbid = MyDatabaseId;
    const Oid userid = pending_userid;
    const uint8_t btype = timing_backend_type();
    ts->events.begin();
    // While a statement is open every attributed wait is one of its own
    // (nested ids included: a change of id flushes first).
    const bool to_statement = timing_flags.open;
    local_timing.drain([&](uint16_t idx, const EventCounters &c, uint64_t qcalls, uint64_t qns) {
        ts->events.add(btype, idx, c);
        if (qcalls != 0 && qid != 0) {
            qt->add(QueryKey{qid, dbid, userid, idx, btype}, qcalls, qns);
            if (to_statement) stmt_waits.add(idx, qcalls, qns);
        }
    });
    ts->events.end();
}

// on_shmem_exit runs before ProcKill (registered earlier, run later), while
// MyProc and shared memory are still there: nothing accumulated is lost.
static void flush_at_exit(int, Datum) {
    // Past this hook PostgreSQL detaches the process from shared memory:
    // the wrappers go back through their cold branch, which tests MyProc.
    timed_plain = false;
    timing_explain_disarm();
    timing_statement_end();
    if (timing_flags.held) release_held_waits();
    flush(now_ns());
    if (timing_flags.log_pending) executions_write_log();
}

void register_exit_hook() {
    exit_hook_registered = true;
    if (!proc_exit_inprogress) on_shmem_exit(flush_at_exit, 0);
}


// About to wait for the client with a flag up (one load tests them all).
__attribute__((noinline)) void at_client_read() {
    // A statement open: the statement hooks decide whether it is over
    // (statements_client_read()).
    if (timing_flags.open) statements_client_read();
    // The statement is over and the main loop holds no resource, so the
    // last slow run's LOG line can be written (before its wait is timed).
    if (timing_flags.log_pending) executions_write_log();
    // Waits held for a statement that never began (an error, an untimed
    // statement): the message is done with, they were outside any.
    if (timing_flags.held) release_held_waits();
    // An EXPLAIN still armed here ended without printing (a utility with no
    // plan): the wait for the client is nobody's node.
    if (timing_flags.explain) timing_explain_disarm();
}

uint16_t client_read_index = 0;

// The dense index a call of `call` under wait event `info` is counted at.
__attribute__((noinline)) uint16_t call_index(BlockingCall call, uint32 info) {
    return info == 0 ? unreported_index(call) : wait_index(info);
}

// Live wait time of a process for pg_stat_waits_activity.wait_time: how long
// the blocking call it is inside has lasted, from the start begin_call()
// published (end_call() clears it). The start counts only while the process
// still reports the wait event the call began under, so a stale or torn pair
// never shows. Reader side: any process.
double live_wait_ms(const ProcSample &s, bool *valid) {
    *valid = false;
    if (s.wait_start_ns == 0 || s.wait_event_info == 0 || s.wait_start_info != s.wait_event_info) return 0.0;
    int64 now = timing_now_ns();  // the wrappers' clock
    if (now < s.wait_start_ns) return 0.0;
    *valid = true;
    return static_cast<double>(now - s.wait_start_ns) / 1e6;
}

// Output to the client with a statement open, outside any wait event.
__attribute__((noinline, cold)) void sent_with_statement_open() {
    if (MyProc != nullptr && my_wait_event_info != nullptr &&
        *static_cast<volatile uint32 *>(my_wait_event_info) == 0)
        statements_client_send();
}

void timing_flush_own() {
    // Timing turned off (or a reader's statement, which has begun already):
    // a message that arrived before is no start for a later statement.
    message_arrived_ns = 0;
    if (anything_pending()) flush(now_ns());
}

// Reader side (any backend, in a SQL function).
void timing_collect_held_rows() {
    if (timing_shared == nullptr || shared == nullptr) return;
    const uint32 request = __atomic_add_fetch(&timing_shared->flush_request, 1, __ATOMIC_SEQ_CST);
    BackendSlot *own = my_live_slot();
    // An idle backend publishes within kIdleFlushMs of its last statement,
    // a busy one at its next wait for the client; a backend that does
    // neither within the bound is not waited for. Rows held after a backend
    // answered this request belong to statements that ended after it was
    // made: a busy backend is waited for once, not until it stops.
    const int64 deadline = now_ns() + 10 * static_cast<int64>(kIdleFlushMs) * 1000000;
    for (;;) {
        bool held = false;
        for (uint32 i = 0; i < shared->num_slots && !held; i++) {
            const BackendSlot *s = &shared->slots[i];
            held = s != own && __atomic_load_n(&s->cpu_rows_held, __ATOMIC_ACQUIRE) != 0 &&
                   static_cast<int32>(__atomic_load_n(&s->cpu_rows_answered, __ATOMIC_RELAXED) - request) < 0;
        }
        if (!held || now_ns() > deadline) return;
        pg_usleep(500);
        CHECK_FOR_INTERRUPTS();
    }
}

}  // namespace psw
