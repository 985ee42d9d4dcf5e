// pg_stat_waits_status: one row describing the extension itself — where to
// look first when a view is empty.
#include "../boundary.h"
#include "../gucs.h"
#include "../sampling/sampling.h"
#include "../shared_state.h"
#include "../timing/timing.h"
#include "../../core/wait_catalog.h"

#include <sched.h>
#include <unistd.h>

PSW_SQL_FUNCTION(pg_stat_waits_status_internal)
PSW_SQL_FUNCTION(pg_stat_waits_require_preload)

namespace psw {

enum StatusColumn {
    kStSamplerPid, kStSamplePeriod, kStSamplesTaken, kStLastSample, kStHistorySize, kStHistoryUsed,
    kStProfileEntries, kStProfileMax, kStProfileDropped, kStTiming, kStInterposed, kStShmemBytes,
    kStStatsReset, kStSamplerLagMs, kStProfileEvicted, kStBucketsEvicted, kStQueriesEvicted, kStQueriesDropped,
    kStCpuCount, kStColumns
};

static Datum interposed_array(uint32 mask) {
    Datum elems[kBlockingCallCount];
    int n = 0;
    for (int c = 0; c < kBlockingCallCount; c++)
        if (mask & (1u << c)) elems[n++] = CStringGetTextDatum(blocking_call_name(static_cast<BlockingCall>(c)));
    return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

// CPUs this server may run on: the backend's affinity mask (inherited from
// the postmaster, so a server pinned to some CPUs reports those), else the
// online CPUs. Average active sessions above it with CPU on top mean the
// CPUs are saturated.
static int32 server_cpu_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int32>(n) : 1;
}

}  // namespace psw

Datum pg_stat_waits_status_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_status", [&]() -> Datum {
        psw::require_preloaded();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        const volatile psw::SharedState *sh = psw::shared;

        Datum v[psw::kStColumns];
        bool n[psw::kStColumns];
        memset(n, 0, sizeof(n));
        int32 sampler_pid = sh->sampler_pid;
        v[psw::kStSamplerPid] = Int32GetDatum(sampler_pid);
        n[psw::kStSamplerPid] = sampler_pid == 0;
        v[psw::kStSamplePeriod] = Int32GetDatum(psw::guc_sample_period_ms);
        v[psw::kStSamplesTaken] = Int64GetDatum(sh->samples_taken);
        TimestampTz last = sh->last_sample_time;
        v[psw::kStLastSample] = TimestampTzGetDatum(last);
        n[psw::kStLastSample] = last == 0;
        v[psw::kStHistorySize] = Int32GetDatum(psw::guc_history_size);
        v[psw::kStHistoryUsed] = Int32GetDatum(static_cast<int32>(sh->history_used));
        v[psw::kStProfileEntries] = Int32GetDatum(static_cast<int32>(sh->profile_entries));
        v[psw::kStProfileMax] = Int32GetDatum(psw::guc_profile_max);
        v[psw::kStProfileDropped] = Int64GetDatum(sh->profile_dropped);
        v[psw::kStTiming] = BoolGetDatum(psw::guc_timing);
        v[psw::kStInterposed] = psw::interposed_array(sh->interposed_mask);
        v[psw::kStShmemBytes] = Int64GetDatum(static_cast<int64>(sh->shmem_bytes));
        v[psw::kStStatsReset] = TimestampTzGetDatum(sh->stats_reset);
        v[psw::kStSamplerLagMs] = Float8GetDatum(sh->sampler_lag_ms_max);
        // Eviction counters (racy reads of counters only the sampler or a
        // reset writes; backends only add to queries_dropped).
        v[psw::kStProfileEvicted] = Int64GetDatum(static_cast<int64>(psw::profile_table().evicted()));
        v[psw::kStBucketsEvicted] = Int64GetDatum(static_cast<int64>(psw::minute_buckets().evicted()));
        if (psw::timing_shared != nullptr) {
            psw::QueryTable *qt = psw::timing_query_table();
            v[psw::kStQueriesEvicted] = Int64GetDatum(static_cast<int64>(qt->evicted_count()));
            v[psw::kStQueriesDropped] = Int64GetDatum(static_cast<int64>(qt->dropped_count()));
        } else {
            n[psw::kStQueriesEvicted] = n[psw::kStQueriesDropped] = true;
        }
        // New in 1.2; a 1.1 catalog's result has 18 columns and forms its
        // tuples from the first 18 values only.
        v[psw::kStCpuCount] = Int32GetDatum(psw::server_cpu_count());
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
        return static_cast<Datum>(0);
    });
}

// Called by the extension script so CREATE EXTENSION fails without preload.
Datum pg_stat_waits_require_preload(PG_FUNCTION_ARGS) {
    psw::require_preloaded();
    PG_RETURN_VOID();
}
