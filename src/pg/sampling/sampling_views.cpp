// SQL readers of the sampled data row by row: pg_stat_waits_history,
// _profile and one execution's sampled profile (the roll-ups over a window
// are in sampling_rollups.cpp).
//
// Why no lock: readers copy the history entry by entry under per-entry
// sequences, and the profile and minute buckets under sequence counters, so
// they never make the sampler wait, never wait for each other and never
// depend on the sampler being alive. Only when a profile copy keeps racing
// the sampler (ten tries) does a reader take the shared lock, which bounds
// its wait by one tick's writes.
//
// Every scan can be cancelled (history holds up to 50 million samples):
// loops with only PostgreSQL memory alive call CHECK_FOR_INTERRUPTS()
// directly; the aggregations of top and timeline hold C++ containers, so
// they stop on a pending interrupt and process it once those are gone
// (boundary.h, interruptible()).
#include <new>
#include <vector>

#include "../boundary.h"
#include "../gucs.h"
#include "../activity/proc_reader.h"
#include "sampling.h"
#include "../../core/tsc_clock.h"
#include "../../core/window_agg.h"

PSW_SQL_FUNCTION(pg_stat_waits_history_internal)
PSW_SQL_FUNCTION(pg_stat_waits_execution_profile)
PSW_SQL_FUNCTION(pg_stat_waits_profile_internal)

namespace psw {

// The period samples stand for: the sampler's last period (the GUC may be 0
// now, idling the sampler, while the samples were taken at 10 ms).
double sample_period_for_time() {
    int32 p = sampling->period_ms;
    return p > 0 ? p : Max(guc_sample_period_ms, 0);
}

// ---- history ----------------------------------------------------------------
enum HistoryColumn {
    kHiSampleTime, kHiPid, kHiLeaderPid, kHiBackendType, kHiDatid, kHiUsesysid, kHiState, kHiWaitType,
    kHiWait, kHiQueryid, kHiTopQueryid, kHiQueryStart, kHiBlockers, kHiBlockerDetails, kHiGpid, kHiColumns
};

// The blocker ring, copied and sorted by (pid, query_start, seen_at) so a
// sample finds its record by binary search. Copied once before the history
// is read and again (a few times at most) when a sample is newer than the
// copy: the sampler pushes a tick's records before its samples, so a copy
// taken after a sample was read holds that sample's record.
struct BlockerIndex {
    BlockerRecord *records = nullptr;
    uint64 n = 0;
    TimestampTz copied_at = 0;
    int copies = 0;
};

static int compare_records(const void *a, const void *b) {
    const BlockerRecord *x = static_cast<const BlockerRecord *>(a), *y = static_cast<const BlockerRecord *>(b);
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->b.query_start != y->b.query_start) return x->b.query_start < y->b.query_start ? -1 : 1;
    if (x->b.seen_at != y->b.seen_at) return x->b.seen_at < y->b.seen_at ? -1 : 1;
    return 0;
}

static void copy_blockers(BlockerIndex *ix) {
    SampleRing<BlockerRecord> ring = blocker_ring();
    if (ix->records == nullptr)
        ix->records = static_cast<BlockerRecord *>(
            palloc_extended(Max(ring.capacity(), static_cast<uint64>(1)) * sizeof(BlockerRecord), MCXT_ALLOC_HUGE));
    ix->copied_at = GetCurrentTimestamp();
    ix->n = 0;
    uint64 cap = ring.capacity();
    ring.read([&](const BlockerRecord &r) {
        if (ix->n < cap) ix->records[ix->n++] = r;
    });
    if (ix->n > 1) qsort(ix->records, ix->n, sizeof(BlockerRecord), compare_records);
    ix->copies++;
}

// The latest record of (pid, query_start) seen at or before t, or nullptr.
static const BlockerRecord *find_record(const BlockerIndex &ix, int32 pid, TimestampTz query_start, TimestampTz t) {
    BlockerRecord key;
    memset(&key, 0, sizeof(key));
    key.pid = pid;
    key.b.query_start = query_start;
    key.b.seen_at = t;
    // First record greater than key; the one before it is the candidate.
    uint64 lo = 0, hi = ix.n;
    while (lo < hi) {
        uint64 mid = lo + (hi - lo) / 2;
        if (compare_records(&ix.records[mid], &key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return nullptr;
    const BlockerRecord *r = &ix.records[lo - 1];
    return r->pid == pid && r->b.query_start == query_start ? r : nullptr;
}

static const BlockerRecord *sample_blockers(BlockerIndex *ix, const HistorySample &h) {
    if ((h.flags & kSampleBlockers) == 0) return nullptr;
    const BlockerRecord *r = find_record(*ix, h.pid, h.query_start, h.sample_time);
    if (r == nullptr && h.sample_time >= ix->copied_at - 1000 && ix->copies < 16) {
        copy_blockers(ix);
        r = find_record(*ix, h.pid, h.query_start, h.sample_time);
    }
    return r;
}

// Names of a blocker's wait as the views show them: 'CPU' when active
// outside a wait, nothing when idle.
static void blocker_wait_names(const LockBlocker &b, const char **type, const char **name) {
    ProcSample s;
    memset(&s, 0, sizeof(s));
    s.wait_event_info = b.wait_event_info;
    s.state = b.state;
    wait_event_names(s, type, name);
}

static void json_text_field(StringInfo buf, const char *key, const char *value) {
    appendStringInfo(buf, ", \"%s\": ", key);
    if (value == nullptr)
        appendStringInfoString(buf, "null");
    else
        escape_json(buf, value);
}

// blockers (pids) and blocker_details (jsonb) of one set of blockers.
static Datum blocker_pids_datum(const LockBlockers &b) {
    int n = static_cast<int>(blockers_kept(b));
    Datum *elems = static_cast<Datum *>(palloc(sizeof(Datum) * Max(n, 1)));
    for (int i = 0; i < n; i++) elems[i] = Int32GetDatum(b.blockers[i].pid);
    return PointerGetDatum(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
}

template <typename Visible>
static Datum blocker_details_datum(const LockBlockers &b, Visible &&visible) {
    StringInfoData buf;
    initStringInfo(&buf);
    appendStringInfoChar(&buf, '[');
    int n = static_cast<int>(blockers_kept(b));
    for (int i = 0; i < n; i++) {
        const LockBlocker &x = b.blockers[i];
        if (i > 0) appendStringInfoString(&buf, ", ");
        appendStringInfo(&buf, "{\"pid\": %d", x.pid);
        json_text_field(&buf, "state", slot_state_name(x.state));
        const char *wtype = nullptr, *wname = nullptr;
        if (x.pid != 0) blocker_wait_names(x, &wtype, &wname);
        json_text_field(&buf, "wait_event_type", wtype);
        json_text_field(&buf, "wait_event", wname);
        if (x.queryid != 0 && visible(static_cast<Oid>(x.usesysid)))
            appendStringInfo(&buf, ", \"queryid\": %lld", static_cast<long long>(static_cast<int64>(x.queryid)));
        else
            appendStringInfoString(&buf, ", \"queryid\": null");
        if (x.gpid != 0)
            appendStringInfo(&buf, ", \"gpid\": %lld}", static_cast<long long>(x.gpid));
        else
            appendStringInfoString(&buf, ", \"gpid\": null}");
    }
    appendStringInfoChar(&buf, ']');
    return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

static void put_history_row(ReturnSetInfo *rsinfo, const HistorySample &h, VisibilityCache &vis,
                            BlockerIndex *blockers) {
    Datum v[kHiColumns];
    bool n[kHiColumns];
    memset(n, 0, sizeof(n));
    v[kHiSampleTime] = TimestampTzGetDatum(h.sample_time);
    v[kHiPid] = Int32GetDatum(h.pid);
    v[kHiLeaderPid] = Int32GetDatum(h.leader_pid);
    n[kHiLeaderPid] = h.leader_pid == 0;
    v[kHiBackendType] = text_or_null(backend_type_name(h.backend_type), &n[kHiBackendType]);
    v[kHiDatid] = ObjectIdGetDatum(h.datid);
    n[kHiDatid] = h.datid == InvalidOid;
    v[kHiUsesysid] = ObjectIdGetDatum(h.usesysid);
    n[kHiUsesysid] = h.usesysid == InvalidOid;
    v[kHiState] = text_or_null(slot_state_name(h.state), &n[kHiState]);
    const char *wtype, *wname;
    encoded_wait_names(h.wait, &wtype, &wname);
    v[kHiWaitType] = text_or_null(wtype, &n[kHiWaitType]);
    v[kHiWait] = text_or_null(wname, &n[kHiWait]);
    // Visibility follows the role that ran the sampled statement.
    bool visible = vis.get(h.usesysid);
    v[kHiQueryid] = Int64GetDatum(static_cast<int64>(h.queryid));
    n[kHiQueryid] = !visible || h.queryid == 0;
    v[kHiTopQueryid] = Int64GetDatum(static_cast<int64>(h.top_queryid));
    n[kHiTopQueryid] = !visible || h.top_queryid == 0;
    // Hidden like pg_stat_activity.query_start.
    v[kHiQueryStart] = TimestampTzGetDatum(h.query_start);
    n[kHiQueryStart] = !visible || h.query_start == 0;
    const BlockerRecord *r = sample_blockers(blockers, h);
    n[kHiBlockers] = n[kHiBlockerDetails] = r == nullptr;
    if (r != nullptr) {
        v[kHiBlockers] = blocker_pids_datum(r->b);
        v[kHiBlockerDetails] = blocker_details_datum(r->b, [&](Oid role) { return vis.get(role); });
    }
    v[kHiGpid] = Int64GetDatum(h.gpid);
    n[kHiGpid] = h.gpid == 0;
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
}

}  // namespace psw

Datum pg_stat_waits_history_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_history", [&]() -> Datum {
        psw::require_preloaded();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        // Text datums of each row live in a context reset per row; the
        // tuplestore keeps its own copy.
        MemoryContext row_cxt = AllocSetContextCreate(CurrentMemoryContext, "pg_stat_waits history row",
                                                      ALLOCSET_SMALL_SIZES);
        psw::VisibilityCache vis;
        psw::BlockerIndex blockers;
        psw::copy_blockers(&blockers);
        // Only PostgreSQL memory is alive here: a cancel may longjmp out.
        psw::history_ring().read([&](const psw::HistorySample &h) {
            CHECK_FOR_INTERRUPTS();
            MemoryContext old = MemoryContextSwitchTo(row_cxt);
            psw::put_history_row(rsinfo, h, vis, &blockers);
            MemoryContextSwitchTo(old);
            MemoryContextReset(row_cxt);
        });
        MemoryContextDelete(row_cxt);
        return static_cast<Datum>(0);
    });
}

namespace psw {

size_t copy_profile_slots(FixedHashTable<ProfileKey>::Slot *copy, bool locked) {
    FixedHashTable<ProfileKey> table = profile_table();
    const size_t nslots = table.slot_count();
    size_t nused = 0;
    auto copy_used = [&] {
        const FixedHashTable<ProfileKey>::Slot *src = table.slot_array();
        nused = 0;
        for (size_t i = 0; i < nslots; i++)
            if (src[i].count != 0) copy[nused++] = src[i];
    };
    if (locked) {
        copy_used();
        return nused;
    }
    // Lock-free first. The sampler writes the table every period, so a
    // copy that takes longer than half a period (a profile_max in the
    // hundreds of thousands) is unlikely to succeed on a retry either:
    // go to the lock then instead of copying ten times for nothing.
    const int64 period_ns = static_cast<int64>(sample_period_for_time() * 1000000.0);
    bool ok = false;
    for (int tries = 0; !ok && tries < 10; tries++) {
        int64 t0 = monotonic_ns();
        ok = sampling->profile_seq.read(copy_used, 1);
        if (!ok && (monotonic_ns() - t0) * 2 > period_ns) break;
    }
    if (!ok) {
        LWLockAcquire(shared->lock, LW_SHARED);
        copy_used();
        LWLockRelease(shared->lock);
    }
    return nused;
}

}  // namespace psw

namespace psw {
enum ProfileColumn {
    kPrBackendType, kPrDatid, kPrUsesysid, kPrQueryid, kPrWaitType, kPrWait, kPrSamples, kPrEstTime, kPrColumns
};
}

Datum pg_stat_waits_profile_internal(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_profile", [&]() -> Datum {
        psw::require_preloaded();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        using Table = psw::FixedHashTable<psw::ProfileKey>;
        // The occupied slots only: the buffer is sized for all of them but
        // only the used part is touched (at a large profile_max, faulting in
        // a whole private copy was most of a read's time).
        Table::Slot *copy = static_cast<Table::Slot *>(
            palloc_extended(psw::profile_table().slot_count() * sizeof(Table::Slot), MCXT_ALLOC_HUGE));
        size_t nused = psw::copy_profile_slots(copy, false);
        const double period = psw::sample_period_for_time();  // ms
        psw::VisibilityCache vis;
        for (size_t i = 0; i < nused; i++) {
            if ((i & 1023) == 0) CHECK_FOR_INTERRUPTS();
            const Table::Slot &s = copy[i];
            Datum v[psw::kPrColumns];
            bool n[psw::kPrColumns];
            memset(n, 0, sizeof(n));
            v[psw::kPrBackendType] = psw::text_or_null(psw::backend_type_name(s.key.backend_type), &n[psw::kPrBackendType]);
            v[psw::kPrDatid] = ObjectIdGetDatum(s.key.datid);
            n[psw::kPrDatid] = s.key.datid == InvalidOid;
            v[psw::kPrUsesysid] = ObjectIdGetDatum(s.key.usesysid);
            n[psw::kPrUsesysid] = s.key.usesysid == InvalidOid;
            v[psw::kPrQueryid] = Int64GetDatum(static_cast<int64>(s.key.queryid));
            n[psw::kPrQueryid] = s.key.queryid == 0 || !vis.get(s.key.usesysid);
            const char *wtype, *wname;
            psw::encoded_wait_names(s.key.wait, &wtype, &wname);
            v[psw::kPrWaitType] = psw::text_or_null(wtype, &n[psw::kPrWaitType]);
            v[psw::kPrWait] = psw::text_or_null(wname, &n[psw::kPrWait]);
            v[psw::kPrSamples] = Int64GetDatum(static_cast<int64>(s.count));
            v[psw::kPrEstTime] = Float8GetDatum(static_cast<double>(s.count) * period);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
        }
        pfree(copy);
        return static_cast<Datum>(0);
    });
}

// ---- one execution's sampled profile ---------------------------------------------
namespace psw {
struct ExecWait {
    uint32 wait;
    int64 samples;
};
static int compare_exec_waits(const void *a, const void *b) {
    const ExecWait *x = static_cast<const ExecWait *>(a), *y = static_cast<const ExecWait *>(b);
    if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
    return x->wait < y->wait ? -1 : (x->wait > y->wait ? 1 : 0);
}
}  // namespace psw

Datum pg_stat_waits_execution_profile(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_execution_profile", [&]() -> Datum {
        psw::require_preloaded();
        if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("pg_stat_waits_execution_profile: pid and query_start must not be NULL")));
        int32 pid = PG_GETARG_INT32(0);
        TimestampTz query_start = PG_GETARG_TIMESTAMPTZ(1);
        if (pid <= 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_execution_profile: pid must be positive, not %d", pid)));
        if (TIMESTAMP_NOT_FINITE(query_start))
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_execution_profile: query_start must be a finite timestamp")));
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        // Distinct waits of one execution: a handful; a linear list.
        int cap = 64, used = 0;
        psw::ExecWait *waits = static_cast<psw::ExecWait *>(palloc(sizeof(psw::ExecWait) * cap));
        psw::VisibilityCache vis;
        psw::history_ring().read([&](const psw::HistorySample &h) {
            CHECK_FOR_INTERRUPTS();
            if (h.pid != pid || h.query_start != query_start) return;
            // Other users' executions are invisible here, as their
            // query_start is in pg_stat_waits_history.
            if (!vis.get(h.usesysid)) return;
            uint32 w = h.wait;
            int i = 0;
            while (i < used && waits[i].wait != w) i++;
            if (i == used) {
                if (used == cap) {
                    cap *= 2;
                    waits = static_cast<psw::ExecWait *>(repalloc(waits, sizeof(psw::ExecWait) * cap));
                }
                waits[used++] = {w, 0};
            }
            waits[i].samples++;
        });
        if (used > 1) qsort(waits, used, sizeof(psw::ExecWait), psw::compare_exec_waits);
        double period = psw::sample_period_for_time();
        for (int i = 0; i < used; i++) {
            Datum v[4];
            bool n[4] = {false, false, false, false};
            const char *wtype, *wname;
            psw::encoded_wait_names(waits[i].wait, &wtype, &wname);
            v[0] = psw::text_or_null(wtype, &n[0]);
            v[1] = psw::text_or_null(wname, &n[1]);
            v[2] = Int64GetDatum(waits[i].samples);
            v[3] = Float8GetDatum(static_cast<double>(waits[i].samples) * period);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
        }
        return static_cast<Datum>(0);
    });
}

