// SQL side of exact timing: pg_stat_waits, pg_stat_waits_queries,
// pg_stat_waits_histogram() and pg_stat_waits_timing_info(). Readers copy
// the shared tables with atomic loads and never make a backend wait. Only
// palloc'd memory here (ereport may longjmp).
#include "../boundary.h"
#include "../wait_names.h"
#include "../gucs.h"
#include "../activity/proc_reader.h"
#include "timing.h"
#include "../../core/query_rows.h"
#include "../../core/wait_catalog.h"

PSW_SQL_FUNCTION(pg_stat_waits_internal)
PSW_SQL_FUNCTION(pg_stat_waits_queries_internal)
PSW_SQL_FUNCTION(pg_stat_waits_histogram)
PSW_SQL_FUNCTION(pg_stat_waits_timing_info)

namespace psw {

static constexpr double kNsPerMs = 1e6;

// Per-(backend type, event) counters: ev[t * wait_index_count() + i], rows
// of types not in *types zeroed.
static EventCounters *snapshot_events(uint32 *types) {
    uint16 n = wait_index_count();
    EventCounters *ev =
        static_cast<EventCounters *>(palloc0(sizeof(EventCounters) * static_cast<size_t>(kMaxBackendTypes) * n));
    timing_shared->events.snapshot(ev, n, types);
    return ev;
}

// Backend type name of an exact-timing row (NULL when unknown).
static Datum backend_type_datum(uint8_t t, bool *isnull) {
    const char *name = t == 0 ? nullptr : backend_type_name(t);
    *isnull = name == nullptr;
    return name ? CStringGetTextDatum(name) : static_cast<Datum>(0);
}

static void require_timing_shmem() {
    require_preloaded();
    if (timing_shared == nullptr) elog(ERROR, "pg_stat_waits: timing shared memory is missing");
    // This session's own waits not yet published (its last wait for the
    // client among them): a session sees its own at once, and the other
    // backends' finished statements too.
    timing_flush_own();
    timing_collect_held_rows();
}

}  // namespace psw

Datum pg_stat_waits_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits", [&]() -> Datum {
        psw::require_timing_shmem();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        uint32 types = 0;
        psw::EventCounters *all = psw::snapshot_events(&types);
        uint16 n = psw::wait_index_count();
        for (uint8_t t = 0; t < psw::kMaxBackendTypes; t++) {
            if ((types & (1u << t)) == 0) continue;
            const psw::EventCounters *ev = all + static_cast<size_t>(t) * n;
            for (uint16 i = 0; i < n; i++) {
                CHECK_FOR_INTERRUPTS();
                if (ev[i].calls == 0) continue;
                const char *type, *name;
                psw::index_names(i, &type, &name);
                Datum v[7];
                bool nulls[7] = {false, false, false, false, false, false, false};
                v[0] = CStringGetTextDatum(type);
                v[1] = CStringGetTextDatum(name);
                v[2] = Int64GetDatum(static_cast<int64>(ev[i].calls));
                v[3] = Float8GetDatum(static_cast<double>(ev[i].total_ns) / psw::kNsPerMs);
                v[4] = Float8GetDatum(static_cast<double>(ev[i].total_ns) / static_cast<double>(ev[i].calls) /
                                      psw::kNsPerMs);
                v[5] = Float8GetDatum(static_cast<double>(ev[i].max_ns) / psw::kNsPerMs);
                v[6] = psw::backend_type_datum(t, &nulls[6]);
                tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
            }
        }
        return static_cast<Datum>(0);
    });
}

Datum pg_stat_waits_queries_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_queries", [&]() -> Datum {
        psw::require_timing_shmem();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        psw::QueryTable *qt = psw::timing_query_table();
        // Huge: at profile_max over 8,388,608 the copy passes palloc's 1 GB.
        psw::QueryRow *rows = static_cast<psw::QueryRow *>(
            palloc_extended(sizeof(psw::QueryRow) * qt->capacity, MCXT_ALLOC_HUGE));
        uint32 nrows = 0;
        // The lambda holds no C++ object: a cancel may longjmp out of it.
        qt->for_each([&](const psw::QueryRow &r) {
            if ((nrows & 4095) == 0) CHECK_FOR_INTERRUPTS();
            if (nrows < qt->capacity) rows[nrows++] = r;
        });
        uint32 m = psw::finish_query_rows(rows, nrows, psw::index_is_cpu_work);
        for (uint32 i = 0; i < m; i++) {
            const psw::QueryRow &r = rows[i];
            if ((i & 4095) == 0) CHECK_FOR_INTERRUPTS();
            Datum v[8];
            bool nulls[8] = {false, false, false, false, false, false, false, false};
            v[0] = Int64GetDatum(static_cast<int64>(r.key.queryid));
            nulls[0] = !psw::can_see_queries_of(r.key.userid);
            v[1] = ObjectIdGetDatum(r.key.datid);
            nulls[1] = r.key.datid == InvalidOid;
            v[2] = ObjectIdGetDatum(r.key.userid);
            nulls[2] = r.key.userid == InvalidOid;
            const char *type, *name;
            psw::index_names(r.key.index, &type, &name);
            v[3] = CStringGetTextDatum(type);
            v[4] = CStringGetTextDatum(name);
            v[5] = Int64GetDatum(static_cast<int64>(r.calls));
            v[6] = Float8GetDatum(static_cast<double>(r.total_ns) / psw::kNsPerMs);
            v[7] = psw::backend_type_datum(r.key.backend_type, &nulls[7]);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
        }
        pfree(rows);
        return static_cast<Datum>(0);
    });
}

Datum pg_stat_waits_histogram(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_histogram", [&]() -> Datum {
        psw::require_timing_shmem();
        char *want_type = text_to_cstring(PG_GETARG_TEXT_PP(0));
        char *want_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
        uint16 n = psw::wait_index_count();
        int found = psw::find_wait_index(want_type, want_name);
        if (found < 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_histogram: unknown wait event \"%s\"/\"%s\"",
                                   psw::quoted_value(want_type), psw::quoted_value(want_name)),
                            errhint("Use the wait_event_type and wait_event names shown by pg_stat_waits.")));
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        // Summed over backend types: the event's durations, whoever waited.
        uint32 types = 0;
        psw::EventCounters *all = psw::snapshot_events(&types);
        psw::EventCounters *ev = static_cast<psw::EventCounters *>(palloc0(sizeof(psw::EventCounters) * n));
        for (uint8_t t = 0; t < psw::kMaxBackendTypes; t++)
            if ((types & (1u << t)) != 0)
                for (int b = 0; b < psw::kHistBuckets; b++) ev[found].hist[b] += all[static_cast<size_t>(t) * n + found].hist[b];
        for (int b = 0; b < psw::kHistBuckets; b++) {
            double lo, hi;
            psw::hist_bucket_bounds_ns(b, &lo, &hi);
            Datum v[3];
            bool nulls[3] = {false, false, false};
            v[0] = Float8GetDatum(lo / psw::kNsPerMs);
            v[1] = Float8GetDatum(hi / psw::kNsPerMs);
            v[2] = Int64GetDatum(static_cast<int64>(ev[found].hist[b]));
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
        }
        return static_cast<Datum>(0);
    });
}

Datum pg_stat_waits_timing_info(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_timing_info", [&]() -> Datum {
        psw::require_timing_shmem();
        TupleDesc desc;
        if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
            elog(ERROR, "pg_stat_waits_timing_info: return type must be a row type");
        desc = BlessTupleDesc(desc);
        psw::QueryTable *qt = psw::timing_query_table();
        Datum v[4];
        bool nulls[4] = {false, false, false, false};
        v[3] = CStringGetTextDatum(psw::timing_clock_name());
        v[0] = Int32GetDatum(static_cast<int32>(qt->used()));
        v[1] = Int32GetDatum(static_cast<int32>(qt->capacity));
        v[2] = Int64GetDatum(static_cast<int64>(qt->dropped_count()));
        return HeapTupleGetDatum(heap_form_tuple(desc, v, nulls));
    });
}
