// pg_wait_sampling_get_current() and pg_wait_sampling_get_history() of the
// drop-in (extension/pg_wait_sampling/): pg_stat_waits' processes and history in
// pg_wait_sampling 1.1's columns. In C rather than SQL over
// pg_stat_waits_activity and _history (pg_wait_sampling_compat's way): the
// history is read by tools every few seconds and has up to millions of rows,
// and a SQL function over the full view (with its blockers) was about 8x
// slower than the view itself.
//
// pg_wait_sampling's conventions: a process outside a wait event (pg_stat_waits'
// 'CPU') has NULL event_type and event, and is left out when
// pg_wait_sampling.sample_cpu is off; queryid is 0 where pg_stat_waits has
// none, where pg_wait_sampling.profile_queries is none, or where the reader
// may not see it (other users' queries, as in pg_stat_activity);
// profile_queries = top shows the top-level statement's id, all the running
// (possibly nested) statement's.
#include "pg_wait_sampling.h"

#include "pg_wait_sampling_gucs.h"
#include "../boundary.h"
#include "../activity/proc_reader.h"
#include "../sampling/sampling.h"

PSW_SQL_FUNCTION(pg_stat_waits_pgws_current)
PSW_SQL_FUNCTION(pg_stat_waits_pgws_history)

namespace psw {

static uint64 shown_queryid(WaitSamplingQueries queries, uint64 queryid, uint64 top_queryid, bool visible) {
    if (!visible) return 0;
    switch (queries) {
        case kWsQueriesAll: return queryid;
        case kWsQueriesTop: return top_queryid;
        default: return 0;
    }
}

// Text datums of the wait names, made once per distinct wait of a scan
// (tuplestore_putvalues copies them into each row).
struct WaitNameCache {
    uint32 waits[64];
    Datum type[64];
    Datum name[64];
    int n = 0;
    // false: 'CPU' (NULL names).
    bool get(uint32 wait, Datum *t, Datum *nm) {
        wait = pgws_wait(wait);
        if (wait == 0 || wait == kWaitIdleNoEvent) return false;
        for (int i = 0; i < n; i++)
            if (waits[i] == wait) {
                *t = type[i];
                *nm = name[i];
                return true;
            }
        const char *wtype, *wname;
        encoded_wait_names(wait, &wtype, &wname);
        *t = CStringGetTextDatum(wtype ? wtype : "");
        *nm = CStringGetTextDatum(wname ? wname : "");
        if (n < 64) {
            waits[n] = wait;
            type[n] = *t;
            name[n] = *nm;
            n++;
        }
        return true;
    }
};

}  // namespace psw

Datum pg_stat_waits_pgws_current(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_wait_sampling_get_current", [&]() -> Datum {
        psw::require_preloaded();
        const bool all = PG_ARGISNULL(0);
        const int32 want = all ? 0 : PG_GETARG_INT32(0);
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        const bool sample_cpu = psw::wait_sampling_sample_cpu();
        const psw::WaitSamplingQueries queries = psw::wait_sampling_profile_queries();
        bool seen = false;
        const uint32 n = psw::proc_count();
        for (uint32 i = 0; i < n; i++) {
            CHECK_FOR_INTERRUPTS();
            psw::ProcSample s;
            if (!psw::read_proc(i, &s) || (!all && s.pid != want)) continue;
            seen = true;
            s.remote_read = false;  // pg_wait_sampling's names: Client/ClientRead
            const char *wtype, *wname;
            psw::wait_event_names(s, &wtype, &wname);
            if (wtype != nullptr && strcmp(wtype, "CPU") == 0) wtype = wname = nullptr;
            // sample_cpu = off leaves out processes not waiting, unless asked for by pid.
            if (all && !sample_cpu && wname == nullptr) continue;
            Datum v[4];
            bool nulls[4] = {false, false, false, false};
            v[0] = Int32GetDatum(s.pid);
            v[1] = psw::text_or_null(wtype, &nulls[1]);
            v[2] = psw::text_or_null(wname, &nulls[2]);
            v[3] = Int64GetDatum(static_cast<int64>(
                psw::shown_queryid(queries, s.queryid, s.top_queryid, psw::can_see_queries_of(s.usesysid))));
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
        }
        if (!all && !seen)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("backend with pid=%d not found", want)));
        return static_cast<Datum>(0);
    });
}

Datum pg_stat_waits_pgws_history(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_wait_sampling_get_history", [&]() -> Datum {
        psw::require_preloaded();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        const bool sample_cpu = psw::wait_sampling_sample_cpu();
        const psw::WaitSamplingQueries queries = psw::wait_sampling_profile_queries();
        psw::VisibilityCache vis;
        psw::WaitNameCache names;
        // Only PostgreSQL memory is alive here: a cancel may longjmp out.
        psw::history_ring().read([&](const psw::HistorySample &h) {
            CHECK_FOR_INTERRUPTS();
            Datum v[5];
            bool nulls[5] = {false, false, false, false, false};
            const bool waiting = names.get(h.wait, &v[2], &v[3]);
            if (!waiting && !sample_cpu) return;
            nulls[2] = nulls[3] = !waiting;
            v[0] = Int32GetDatum(h.pid);
            v[1] = TimestampTzGetDatum(h.sample_time);
            v[4] = Int64GetDatum(static_cast<int64>(
                psw::shown_queryid(queries, h.queryid, h.top_queryid, vis.get(h.usesysid))));
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
        });
        return static_cast<Datum>(0);
    });
}
