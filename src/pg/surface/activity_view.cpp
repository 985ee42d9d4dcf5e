// pg_stat_waits_activity: one row per live process, now.
#include "../boundary.h"
#include "../activity/proc_reader.h"
#include "../timing/timing.h"

PSW_SQL_FUNCTION(pg_stat_waits_activity_internal)

namespace psw {

enum ActivityColumn {
    kActPid, kActLeaderPid, kActBackendType, kActDatid, kActUsesysid, kActState, kActWaitEventType,
    kActWaitEvent, kActWaitTime, kActQueryid, kActTopQueryid, kActQueryStart, kActBlockers, kActGpid, kActColumns
};

static void put_activity_row(ReturnSetInfo *rsinfo, const ProcSample &s) {
    Datum values[kActColumns];
    bool nulls[kActColumns];
    memset(nulls, 0, sizeof(nulls));

    values[kActPid] = Int32GetDatum(s.pid);
    values[kActLeaderPid] = Int32GetDatum(s.leader_pid);
    nulls[kActLeaderPid] = s.leader_pid == 0;
    const char *btype = backend_type_name(s.backend_type);
    // Like pg_stat_activity: a background worker shows its own type
    // ("parallel worker", "pg_stat_waits sampler", ...).
    if (s.backend_type == B_BG_WORKER) {
        const char *bgw = GetBackgroundWorkerTypeByPid(s.pid);
        if (bgw != nullptr) btype = bgw;
    }
    values[kActBackendType] = btype ? CStringGetTextDatum(btype) : 0;
    nulls[kActBackendType] = btype == nullptr;
    values[kActDatid] = ObjectIdGetDatum(s.datid);
    nulls[kActDatid] = s.datid == InvalidOid;
    values[kActUsesysid] = ObjectIdGetDatum(s.usesysid);
    nulls[kActUsesysid] = s.usesysid == InvalidOid;
    const char *state = slot_state_name(s.state);
    values[kActState] = state ? CStringGetTextDatum(state) : 0;
    nulls[kActState] = state == nullptr;
    const char *wtype, *wname;
    wait_event_names(s, &wtype, &wname);
    values[kActWaitEventType] = wtype ? CStringGetTextDatum(wtype) : 0;
    nulls[kActWaitEventType] = wtype == nullptr;
    values[kActWaitEvent] = wname ? CStringGetTextDatum(wname) : 0;
    nulls[kActWaitEvent] = wname == nullptr;
    bool wait_valid = false;
    double wait_ms = live_wait_ms(s, &wait_valid);
    values[kActWaitTime] = Float8GetDatum(wait_ms);
    nulls[kActWaitTime] = !wait_valid;

    bool visible = can_see_queries_of(s.usesysid);
    values[kActQueryid] = Int64GetDatum(static_cast<int64>(s.queryid));
    nulls[kActQueryid] = !visible || s.queryid == 0;
    values[kActTopQueryid] = Int64GetDatum(static_cast<int64>(s.top_queryid));
    nulls[kActTopQueryid] = !visible || s.top_queryid == 0;
    values[kActQueryStart] = TimestampTzGetDatum(s.query_start);
    nulls[kActQueryStart] = !visible || s.query_start == 0 || s.state == kStateIdle;
    // Live lock chain, only for rows in a heavyweight-lock wait: what
    // pg_blocking_pids() says now (it takes the lock manager's locks once
    // per such row, in the reading backend).
    nulls[kActBlockers] = (s.wait_event_info & 0xFF000000U) != PG_WAIT_LOCK;
    if (!nulls[kActBlockers]) values[kActBlockers] = DirectFunctionCall1(pg_blocking_pids, Int32GetDatum(s.pid));
    values[kActGpid] = Int64GetDatum(s.gpid);
    nulls[kActGpid] = s.gpid == 0;

    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

}  // namespace psw

Datum pg_stat_waits_activity_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_activity", [&]() -> Datum {
        psw::require_preloaded();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        uint32 n = psw::proc_count();
        for (uint32 i = 0; i < n; i++) {
            CHECK_FOR_INTERRUPTS();
            psw::ProcSample s;
            if (psw::read_proc(i, &s)) psw::put_activity_row(rsinfo, s);
        }
        return static_cast<Datum>(0);
    });
}
