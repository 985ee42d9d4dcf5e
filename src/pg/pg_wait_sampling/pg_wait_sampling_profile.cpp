// The pg_wait_sampling drop-in's profile and its reset.
//
// pg_wait_sampling_reset_profile() must empty what pg_wait_sampling_profile
// shows and nothing else: pg_profile calls it at every sample, and calling
// pg_stat_waits_reset() there wiped history, exact timing, per-query rows
// and slow runs each time. So the drop-in's profile is pg_stat_waits'
// profile minus a baseline: a copy of that profile taken at the drop-in's
// reset (and at server start, so that it starts empty as pg_wait_sampling's
// does), in shared memory of its own. Nothing of pg_stat_waits changes.
//
// Why a baseline rather than a second profile the sampler keeps: the
// sampler's tick stays as it is (its cost is benchmarked), and the drop-in
// costs nothing unless it is read.
//
// With pg_wait_sampling.profile_pid on, pg_wait_sampling keeps its profile
// per process, and pg_stat_waits' profile has no pid to subtract from: the
// drop-in then keeps a table of its own, (pid, wait, queryid, user) -> count,
// which the sampler fills at each tick (tick_counter, inside its write
// section), bounded by pg_stat_waits.profile_max keys with the profile's
// eviction (least used first), emptied by pg_wait_sampling_reset_profile()
// and empty at start. It costs the tick nothing while the setting is off.
//
// Consistency: the reset copies the profile under shared->lock held
// exclusively, as the sampler's writes and pg_stat_waits_reset() take it,
// and writes the baseline under a sequence counter; readers copy baseline
// and profile lock-free and retry when a reset ran meanwhile (falling back
// to shared->lock in shared mode), so they never see half a baseline.
// A key the profile lost since the baseline (pg_stat_waits_reset(), or an
// eviction) counts from zero again: a key whose count is below its
// baseline's shows its whole count, and a baseline taken before the last
// pg_stat_waits_reset() is not used at all.
#include "pg_wait_sampling.h"

#include "pg_wait_sampling_gucs.h"
#include "../boundary.h"
#include "../gucs.h"
#include "../activity/proc_reader.h"
#include "../sampling/sampling.h"

PSW_SQL_FUNCTION(pg_stat_waits_pgws_profile)
PSW_SQL_FUNCTION(pg_stat_waits_pgws_reset_profile)

namespace psw {

using ProfileTable = FixedHashTable<ProfileKey>;

// Key of the per-process profile (zero padding: keys compare bytewise).
struct PidKey {
    uint64 queryid;
    int32 pid;
    Oid usesysid;  // whose queryid it is (shown only to who may see it)
    uint32 wait;
    uint32 pad;
};
using PidTable = FixedHashTable<PidKey>;

struct WaitSamplingShared {
    SeqRegion seq;  // the baseline is written under it (by a reset holding shared->lock)
    uint32 pad;
    TimestampTz taken_for;  // shared->stats_reset when the baseline was taken
    // followed by the baseline, a raw copy of the profile's table, and the
    // per-process table (written under sampling->profile_seq)
};

static WaitSamplingShared *ws = nullptr;

static Size header_size() { return MAXALIGN(sizeof(WaitSamplingShared)); }
static Size table_bytes() { return ProfileTable::bytes(static_cast<uint64>(guc_profile_max)); }
static Size pid_table_bytes() { return PidTable::bytes(static_cast<uint64>(guc_profile_max)); }
static Size ws_size() { return add_size(add_size(header_size(), MAXALIGN(table_bytes())), MAXALIGN(pid_table_bytes())); }
static char *baseline_mem() { return reinterpret_cast<char *>(ws) + header_size(); }
static PidTable pid_table() { return PidTable(baseline_mem() + MAXALIGN(table_bytes())); }
static const char *profile_mem() { return reinterpret_cast<const char *>(sampling) + sampling->profile_offset; }

// The single writer: the postmaster at start, or a reset holding
// shared->lock exclusively (no sampler write in between).
static void take_baseline() {
    ws->seq.write_begin();
    memcpy(baseline_mem(), profile_mem(), table_bytes());
    ws->taken_for = shared->stats_reset;
    ws->seq.write_end();
}

// The sampler's tick, in its write section: each sample once more, under
// its process. Room is kept as the profile keeps it (a tenth free for the
// next ticks' new keys, a bounded eviction step each tick), so a new
// process is counted however many came before.
static void count_per_process(const HistorySample *samples, uint32 n) {
    if (!wait_sampling_profile_pid()) return;
    PidTable table = pid_table();
    for (uint32 i = 0; i < n; i++) {
        PidKey k;
        memset(&k, 0, sizeof(k));
        k.queryid = samples[i].queryid;
        k.pid = samples[i].pid;
        k.usesysid = samples[i].usesysid;
        k.wait = samples[i].wait;
        table.add(k, 1);  // refused only when full, which the eviction below prevents
    }
    const uint64 target = table.limit() - table.limit() / 10;
    if (table.used() > target) table.evict(target, 1024, [](const PidKey &, uint64) {});
}

static void ws_init(void *ptr, bool found) {
    ws = static_cast<WaitSamplingShared *>(ptr);
    tick_counter = count_per_process;
    if (found) return;
    memset(ptr, 0, header_size());
    pid_table().init(static_cast<uint64>(guc_profile_max));
    take_baseline();
}

const ShmemPart pg_wait_sampling_part = {"pg_stat_waits pg_wait_sampling", ws_size, ws_init};

// Whether an encoded wait is pg_stat_waits' 'CPU' (pg_wait_sampling: NULL
// event_type and event).
static bool is_cpu_wait(uint32 wait) {
    wait = pgws_wait(wait);
    return wait == 0 || wait == kWaitIdleNoEvent;
}

// One row of the drop-in's profile before rows of the same process, wait
// and queryid (other backend types, databases, users) are summed.
struct WsRow {
    int32 pid;  // 0 unless profile_pid is on
    uint32 wait;
    uint64 queryid;
    uint64 count;
};

static int compare_rows(const void *a, const void *b) {
    const WsRow *x = static_cast<const WsRow *>(a), *y = static_cast<const WsRow *>(b);
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->wait != y->wait) return x->wait < y->wait ? -1 : 1;
    if (x->queryid != y->queryid) return x->queryid < y->queryid ? -1 : 1;
    return 0;
}

// The per-process profile's rows: a copy under sampling->profile_seq (the
// sampler's writes and the reset's), or under shared->lock in shared mode
// when the copy keeps racing the sampler; *nrows says how many.
static WsRow *per_process_rows(bool sample_cpu, WaitSamplingQueries queries, size_t *nrows_out) {
    PidTable table = pid_table();
    const size_t nslots = table.slot_count();
    PidTable::Slot *copy =
        static_cast<PidTable::Slot *>(palloc_extended(nslots * sizeof(PidTable::Slot), MCXT_ALLOC_HUGE));
    auto copy_all = [&] { memcpy(static_cast<void *>(copy), table.slot_array(), nslots * sizeof(PidTable::Slot)); };
    if (!sampling->profile_seq.read(copy_all, 3)) {
        LWLockAcquire(shared->lock, LW_SHARED);
        copy_all();
        LWLockRelease(shared->lock);
    }
    size_t nused = 0;
    for (size_t i = 0; i < nslots; i++) nused += copy[i].count != 0;
    WsRow *rows = static_cast<WsRow *>(palloc_extended(Max(nused, 1) * sizeof(WsRow), MCXT_ALLOC_HUGE));
    size_t nrows = 0;
    VisibilityCache vis;
    for (size_t i = 0; i < nslots; i++) {
        if ((i & 1023) == 0) CHECK_FOR_INTERRUPTS();
        const PidTable::Slot &s = copy[i];
        if (s.count == 0) continue;
        const uint32 wait = is_cpu_wait(s.key.wait) ? 0 : pgws_wait(s.key.wait);
        if (wait == 0 && !sample_cpu) continue;
        const bool with_id = queries != kWsQueriesNone && vis.get(s.key.usesysid);
        rows[nrows++] = {s.key.pid, wait, with_id ? s.key.queryid : 0, s.count};
    }
    pfree(copy);
    *nrows_out = nrows;
    return rows;
}

// pg_stat_waits' profile minus the baseline, pid 0 (profile_pid off).
static WsRow *baseline_rows(bool sample_cpu, WaitSamplingQueries queries, size_t *nrows_out) {
    using Slot = ProfileTable::Slot;
    const size_t nslots = profile_table().slot_count();
    Slot *slots = static_cast<Slot *>(palloc_extended(nslots * sizeof(Slot), MCXT_ALLOC_HUGE));
    char *base_mem = static_cast<char *>(palloc_extended(table_bytes(), MCXT_ALLOC_HUGE));
    TimestampTz taken_for = 0, stats_reset = 0;
    size_t nused = 0;
    auto copy_both = [&](bool locked) {
        memcpy(base_mem, baseline_mem(), table_bytes());
        taken_for = ws->taken_for;
        nused = copy_profile_slots(slots, locked);
        stats_reset = shared->stats_reset;
    };
    if (!ws->seq.read([&] { copy_both(false); }, 3)) {
        LWLockAcquire(shared->lock, LW_SHARED);
        copy_both(true);
        LWLockRelease(shared->lock);
    }
    ProfileTable baseline(base_mem);
    const bool use_baseline = taken_for == stats_reset;
    WsRow *rows = static_cast<WsRow *>(palloc_extended(Max(nused, 1) * sizeof(WsRow), MCXT_ALLOC_HUGE));
    size_t nrows = 0;
    VisibilityCache vis;
    for (size_t i = 0; i < nused; i++) {
        if ((i & 1023) == 0) CHECK_FOR_INTERRUPTS();
        const Slot &s = slots[i];
        const uint64 before = use_baseline ? baseline.get(s.key) : 0;
        const uint64 count = s.count >= before ? s.count - before : s.count;
        if (count == 0) continue;
        const uint32 wait = is_cpu_wait(s.key.wait) ? 0 : pgws_wait(s.key.wait);
        if (wait == 0 && !sample_cpu) continue;
        const bool with_id = queries != kWsQueriesNone && vis.get(s.key.usesysid);
        rows[nrows++] = {0, wait, with_id ? s.key.queryid : 0, count};
    }
    pfree(slots);
    pfree(base_mem);
    *nrows_out = nrows;
    return rows;
}

}  // namespace psw

Datum pg_stat_waits_pgws_reset_profile(PG_FUNCTION_ARGS) {
    psw::require_preloaded();
    LWLockAcquire(psw::shared->lock, LW_EXCLUSIVE);
    psw::take_baseline();
    // The per-process table is the sampler's to write, under profile_seq;
    // holding shared->lock, the reset is the one writer now.
    psw::sampling->profile_seq.write_begin();
    psw::pid_table().clear();
    psw::sampling->profile_seq.write_end();
    LWLockRelease(psw::shared->lock);
    PG_RETURN_VOID();
}

Datum pg_stat_waits_pgws_profile(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_wait_sampling_get_profile", [&]() -> Datum {
        psw::require_preloaded();
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        const bool sample_cpu = psw::wait_sampling_sample_cpu();
        const psw::WaitSamplingQueries queries = psw::wait_sampling_profile_queries();
        size_t nrows = 0;
        psw::WsRow *rows = psw::wait_sampling_profile_pid() ? psw::per_process_rows(sample_cpu, queries, &nrows)
                                                            : psw::baseline_rows(sample_cpu, queries, &nrows);
        if (nrows > 1) qsort(rows, nrows, sizeof(psw::WsRow), psw::compare_rows);
        for (size_t i = 0; i < nrows;) {
            size_t j = i;
            uint64 sum = 0;
            for (; j < nrows && psw::compare_rows(&rows[i], &rows[j]) == 0; j++) sum += rows[j].count;
            Datum v[5];
            bool n[5] = {false, true, true, false, false};
            v[0] = Int32GetDatum(rows[i].pid);
            if (rows[i].wait != 0) {
                const char *wtype, *wname;
                psw::encoded_wait_names(rows[i].wait, &wtype, &wname);
                v[1] = psw::text_or_null(wtype, &n[1]);
                v[2] = psw::text_or_null(wname, &n[2]);
            }
            v[3] = Int64GetDatum(static_cast<int64>(rows[i].queryid));
            v[4] = Int64GetDatum(static_cast<int64>(sum));
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
            i = j;
        }
        return static_cast<Datum>(0);
    });
}
