// Slow executions: the shared ring of slow top-level runs (capture at the
// statement's end, from statement_timing.cpp) and its SQL reader,
// pg_stat_waits_executions (docs/executions.md).
//
// Capture runs only for a statement whose elapsed time reached
// pg_stat_waits.capture_min_duration; it may run inside a transaction
// callback or at process exit, so it never allocates, never takes a lock and
// never raises an error. Readers copy records under each entry's sequence.
#include "../boundary.h"
#include "../gucs.h"
#include "../wait_names.h"
#include "timing.h"
#include "../activity/citus.h"
#include "../activity/proc_reader.h"
#include "../../core/executions.h"

PSW_SQL_FUNCTION(pg_stat_waits_executions_internal)

namespace psw {

static ExecRing *exec_ring = nullptr;
// Built here at capture time rather than on the stack (1.4 kB).
static ExecRecord capture_buf;
// The run whose LOG line is still to be written (capture_log).
static ExecRecord log_buf;

static Size exec_ring_size() { return ExecRing::bytes(kExecRingSize); }

static void exec_ring_init(void *ptr, bool found) {
    exec_ring = static_cast<ExecRing *>(ptr);
    if (!found) exec_ring->init(kExecRingSize);
}

const ShmemPart executions_part = {"pg_stat_waits executions", exec_ring_size, exec_ring_init};

void executions_reset() {
    if (exec_ring != nullptr) exec_ring->reset();
}

ExecRing *executions_ring() { return exec_ring; }

uint64 executions_dropped() { return exec_ring != nullptr ? exec_ring->dropped_count() : 0; }

void executions_capture(const StatementWaits &waits, int64 elapsed_ns, uint64 queryid, bool own_text,
                        TimestampTz first_start) {
    if (exec_ring == nullptr || shared == nullptr || MyProc == nullptr) return;
    ExecRecord &r = capture_buf;
    TimestampTz now = GetCurrentTimestamp();
    r.ended = now;
    r.started = now - elapsed_ns / 1000;
    r.pid = MyProcPid;
    r.datid = MyDatabaseId;
    // The session's role, as pg_stat_activity and the history show it, not
    // the current one: a run under SET ROLE stays its session's, so its text
    // is visible to the same readers as that session's activity.
    r.userid = MyProc->roleId;
    r.gpid = citus_own_gpid();
    r.queryid = queryid;
    r.elapsed_ns = static_cast<uint64>(elapsed_ns);
    exec_summarize_waits(waits, &r);
    r.blockers.count = 0;
    if (BackendSlot *own = own_slot(); own != nullptr) {
        BackendSlot &s = *own;
        // This backend is the slot's only writer: its own data reads as is.
        TimestampTz query_start = s.pub.data.query_start;
        // Server mode publishes no start of its own: PostgreSQL's entry has
        // it, as the sampler read it.
        if (query_start == 0 && MyBEEntry != nullptr) query_start = MyBEEntry->st_activity_start_timestamp;
        // The run's first message: its Parse or Bind when it waited there.
        TimestampTz first = first_start != 0 && first_start < query_start ? first_start : query_start;
        if (first != 0) r.started = first;
        // The sampler's last look at this statement's lock waits, taken in
        // one of its messages; blockers seen during an earlier statement
        // do not belong to this one.
        LockBlockers b;
        if (s.blocked_by.read(&b, 10) && b.count > 0 && first != 0 && b.query_start >= first &&
            b.query_start <= query_start)
            r.blockers = b;
    }
    // The text as pg_stat_activity keeps it: track_activity_query_size - 1
    // bytes at most, cut on a character boundary. A run of the extended
    // protocol ends after its Execute message has cleared
    // debug_query_string (at Sync's commit, or when the backend waits for
    // the client inside a block): its text is then the one this backend's
    // status entry still shows, which only the next statement replaces.
    // A run whose end was seen only when the next statement began keeps no
    // text: both places hold the next one's by then.
    r.text_len = 0;
    const char *q = own_text ? debug_query_string : nullptr;
    if (own_text && q == nullptr && MyBEEntry != nullptr) q = MyBEEntry->st_activity_raw;
    if (q != nullptr) {
        int max = pgstat_track_activity_query_size - 1;
        if (max > static_cast<int>(kExecTextMax)) max = static_cast<int>(kExecTextMax);
        int len = static_cast<int>(strnlen(q, static_cast<size_t>(max) + 1));
        if (len > max) len = pg_mbcliplen(q, len, max);
        if (len > 0) {
            memcpy(r.text, q, static_cast<size_t>(len));
            r.text_len = static_cast<uint32>(len);
        }
    }
    exec_ring->publish(r);
    // Its LOG line waits for a point where logging is safe (timing.h). One
    // is always reached before the next capture: the next statement starts
    // first.
    if (guc_capture_log && !timing_flags.log_pending) {
        memcpy(&log_buf, &r, sizeof(r));
        timing_flags.log_pending = true;
    }
}

// ---- what a run's record says, for the LOG line and the view ---------------------

static constexpr double kNsPerMs = 1e6;

// A blocker's state (nullptr when unknown) and its wait, as recorded: 'CPU'
// outside a wait.
static void blocker_names(const LockBlocker &b, const char **state, const char **type, const char **name) {
    *state = slot_state_name(b.state);
    *type = "CPU";
    *name = "CPU";
    if (b.wait_event_info != 0) wait_info_names(b.wait_event_info, type, name);
}

// ---- the LOG line -------------------------------------------------------------

static void append_ms(StringInfo buf, uint64 ns) { appendStringInfo(buf, "%.3f ms", static_cast<double>(ns) / kNsPerMs); }
static void append_calls(StringInfo buf, uint64 calls) {
    appendStringInfo(buf, " (" UINT64_FORMAT " %s)", calls, calls == 1 ? "call" : "calls");
}

// One line in the spirit of auto_explain's: the run's duration, CPU, id,
// waits (heaviest first) and blockers, then its text. The server log is
// the superuser's: nothing is hidden.
void executions_write_log() {
    timing_flags.log_pending = false;
    const ExecRecord &r = log_buf;
    HOLD_INTERRUPTS();  // errfinish() would process them, maybe inside a wrapped call
    MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
    StringInfoData buf;
    initStringInfo(&buf);
    appendStringInfoString(&buf, "pg_stat_waits: slow run: duration: ");
    append_ms(&buf, r.elapsed_ns);
    appendStringInfoString(&buf, "  cpu: ");
    append_ms(&buf, r.elapsed_ns > r.wait_ns ? r.elapsed_ns - r.wait_ns : 0);
    appendStringInfo(&buf, "  started: %s  queryid: " INT64_FORMAT "  waits: ", timestamptz_to_str(r.started),
                     static_cast<int64>(r.queryid));
    if (r.nwaits == 0 && r.rest_events == 0) appendStringInfoString(&buf, "none");
    for (int i = 0; i < r.nwaits; i++) {
        const char *type, *name;
        index_names(r.waits[i].index, &type, &name);
        appendStringInfo(&buf, "%s%s/%s ", i > 0 ? ", " : "", type, name);
        append_ms(&buf, r.waits[i].ns);
        append_calls(&buf, r.waits[i].calls);
    }
    if (r.rest_events > 0) {
        appendStringInfo(&buf, "%s%u other events ", r.nwaits > 0 ? ", " : "", static_cast<unsigned>(r.rest_events));
        append_ms(&buf, r.rest_ns);
        append_calls(&buf, r.rest_calls);
    }
    uint32 nb = blockers_kept(r.blockers);
    if (nb > 0) appendStringInfoString(&buf, "  blocked by: ");
    for (uint32 i = 0; i < nb; i++) {
        const LockBlocker &b = r.blockers.blockers[i];
        const char *state, *type, *name;
        blocker_names(b, &state, &type, &name);
        if (b.pid == 0)
            appendStringInfo(&buf, "%sa prepared transaction", i > 0 ? ", " : "");
        else
            appendStringInfo(&buf, "%spid %d (%s, %s/%s, queryid " INT64_FORMAT ")", i > 0 ? ", " : "", b.pid,
                             state != nullptr ? state : "unknown", type, name, static_cast<int64>(b.queryid));
    }
    if (r.blockers.count > static_cast<uint32>(kMaxLockBlockers))
        appendStringInfo(&buf, " and %u more", r.blockers.count - kMaxLockBlockers);
    appendStringInfo(&buf, "  statement: %.*s", static_cast<int>(r.text_len), r.text);
    ereport(LOG, (errmsg_internal("%s", buf.data), errhidestmt(true), errhidecontext(true)));
    pfree(buf.data);
    MemoryContextSwitchTo(old);
    RESUME_INTERRUPTS();
}

// ---- the view -----------------------------------------------------------------

static void json_wait(StringInfo buf, const char *type, const char *name, uint64 calls, uint64 ns) {
    appendStringInfoString(buf, "{\"wait_event_type\": ");
    escape_json(buf, type);
    appendStringInfoString(buf, ", \"wait_event\": ");
    escape_json(buf, name);
    appendStringInfo(buf, ", \"calls\": " UINT64_FORMAT ", \"time_ms\": %.3f}", calls, static_cast<double>(ns) / kNsPerMs);
}

static Datum waits_json(const ExecRecord &r) {
    StringInfoData buf;
    initStringInfo(&buf);
    appendStringInfoChar(&buf, '[');
    for (int i = 0; i < r.nwaits; i++) {
        const char *type, *name;
        index_names(r.waits[i].index, &type, &name);
        if (i > 0) appendStringInfoString(&buf, ", ");
        json_wait(&buf, type, name, r.waits[i].calls, r.waits[i].ns);
    }
    if (r.rest_events > 0) {
        char label[64];
        snprintf(label, sizeof(label), "%u other events", static_cast<unsigned>(r.rest_events));
        if (r.nwaits > 0) appendStringInfoString(&buf, ", ");
        json_wait(&buf, "Other", label, r.rest_calls, r.rest_ns);
    }
    appendStringInfoChar(&buf, ']');
    return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

// Blockers' queryids are shown to readers who may see the blocker's
// statements (its role was recorded with it); pids, states and waits to
// everyone, as pg_blocking_pids() and pg_stat_activity show them.
static Datum blockers_json(const ExecRecord &r) {
    StringInfoData buf;
    initStringInfo(&buf);
    appendStringInfoChar(&buf, '[');
    uint32 n = blockers_kept(r.blockers);
    for (uint32 i = 0; i < n; i++) {
        const LockBlocker &b = r.blockers.blockers[i];
        const char *state, *type, *name;
        blocker_names(b, &state, &type, &name);
        if (i > 0) appendStringInfoString(&buf, ", ");
        appendStringInfo(&buf, "{\"pid\": %d, \"state\": ", b.pid);
        if (state != nullptr)
            escape_json(&buf, state);
        else
            appendStringInfoString(&buf, "null");
        appendStringInfoString(&buf, ", \"wait_event_type\": ");
        escape_json(&buf, type);
        appendStringInfoString(&buf, ", \"wait_event\": ");
        escape_json(&buf, name);
        if (b.queryid != 0 && can_see_queries_of(b.usesysid))
            appendStringInfo(&buf, ", \"queryid\": " INT64_FORMAT, static_cast<int64>(b.queryid));
        else
            appendStringInfoString(&buf, ", \"queryid\": null");
        if (b.gpid != 0)
            appendStringInfo(&buf, ", \"gpid\": " INT64_FORMAT "}", static_cast<int64>(b.gpid));
        else
            appendStringInfoString(&buf, ", \"gpid\": null}");
    }
    if (r.blockers.count > static_cast<uint32>(kMaxLockBlockers))
        appendStringInfo(&buf, "%s{\"more\": %u}", n > 0 ? ", " : "", r.blockers.count - kMaxLockBlockers);
    appendStringInfoChar(&buf, ']');
    return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

}  // namespace psw

Datum pg_stat_waits_executions_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_executions", [&]() -> Datum {
        psw::require_preloaded();
        if (psw::exec_ring == nullptr) elog(ERROR, "pg_stat_waits: executions shared memory is missing");
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        psw::ExecRecord *rec = static_cast<psw::ExecRecord *>(palloc(sizeof(psw::ExecRecord)));
        psw::exec_ring->for_each(rec, [&](const psw::ExecRecord &r) {
            CHECK_FOR_INTERRUPTS();
            bool visible = psw::can_see_queries_of(r.userid);
            Datum v[12];
            bool n[12] = {false, false, false, false, false, false, false, false, false, false, false, false};
            v[0] = TimestampTzGetDatum(r.started);
            v[1] = TimestampTzGetDatum(r.ended);
            v[2] = Int32GetDatum(r.pid);
            v[3] = ObjectIdGetDatum(r.datid);
            v[4] = ObjectIdGetDatum(r.userid);
            v[5] = Int64GetDatum(static_cast<int64>(r.queryid));
            n[5] = !visible || r.queryid == 0;
            v[6] = visible ? PointerGetDatum(cstring_to_text_with_len(r.text, static_cast<int>(r.text_len)))
                           : static_cast<Datum>(0);
            n[6] = !visible;
            double elapsed = static_cast<double>(r.elapsed_ns) / psw::kNsPerMs;
            double waits = static_cast<double>(r.wait_ns) / psw::kNsPerMs;
            v[7] = Float8GetDatum(elapsed);
            v[8] = Float8GetDatum(elapsed > waits ? elapsed - waits : 0.0);
            v[9] = psw::waits_json(r);
            v[10] = psw::blockers_json(r);
            v[11] = Int64GetDatum(r.gpid);
            n[11] = r.gpid == 0;
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
        });
        return static_cast<Datum>(0);
    });
}
