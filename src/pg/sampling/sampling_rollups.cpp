// SQL readers that roll the sampled data up over a window: pg_stat_waits_top
// and pg_stat_waits_timeline, from the history ring while it covers the
// window, else from the minute buckets.
//
// The aggregations hold C++ containers, so they stop on a pending interrupt
// and process it once those are gone (boundary.h, interruptible()).
#include <new>
#include <vector>

#include "../boundary.h"
#include "sampling.h"
#include "../../core/window_agg.h"

PSW_SQL_FUNCTION(pg_stat_waits_top)
PSW_SQL_FUNCTION(pg_stat_waits_timeline)

namespace psw {

// palloc that throws instead of ereport, for use while C++ objects are alive.
template <typename T>
static T *palloc_array_nothrow(size_t n) {
    void *p = palloc_extended(Max(n, static_cast<size_t>(1)) * sizeof(T), MCXT_ALLOC_NO_OOM | MCXT_ALLOC_HUGE);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T *>(p);
}

// ---- window: history ring or minute buckets -----------------------------------
static const char *interval_text(Interval *i) {
    return DatumGetCString(DirectFunctionCall1(interval_out, PointerGetDatum(i)));
}

// A window reaches back from now; "positive" is judged on the whole interval
// as calendar arithmetic does it, so '1 day -1 hour' is a 23-hour window.
static TimestampTz window_start(const char *function, Interval *since, TimestampTz *now_out = nullptr) {
    TimestampTz now = GetCurrentTimestamp();
    if (now_out != nullptr) *now_out = now;
    volatile TimestampTz from = 0;
    volatile bool too_long = false;
    MemoryContext cxt = CurrentMemoryContext;
    // An interval reaching before 4714 BC gets PostgreSQL's bare "timestamp
    // out of range"; it is caught to name the function and the argument, as
    // every other argument error does. Safe without a subtransaction: the
    // subtraction is pure arithmetic, it holds no lock, buffer or file.
    PG_TRY();
    {
        from = DatumGetTimestampTz(
            DirectFunctionCall2(timestamptz_mi_interval, TimestampTzGetDatum(now), PointerGetDatum(since)));
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(cxt);
        ErrorData *e = CopyErrorData();
        if (e->sqlerrcode != ERRCODE_DATETIME_VALUE_OUT_OF_RANGE) PG_RE_THROW();
        FlushErrorState();
        FreeErrorData(e);
        too_long = true;
    }
    PG_END_TRY();
    if (too_long)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("%s: since reaches back before the earliest timestamp, not \"%s\"", function,
                               interval_text(since))));
    if (from >= now)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: since must be a positive interval, not \"%s\"", function, interval_text(since))));
    return from;
}

// The history answers a window when it holds every sample since the
// window's start; otherwise, if the minute buckets reach further back, they
// answer it (minute resolution). *since_out: from when the ring holds every
// sample (the sampler's start or the last reset, or the oldest sample once
// the ring has wrapped).
// Where the minute buckets' samples start: like the history, they start
// empty at a reset and at the server's start, unless the stat file brought
// older minutes back, with the stats_reset they were counted since.
static TimestampTz minute_buckets_since() { return shared->stats_reset; }

static bool use_history(TimestampTz from, TimestampTz *since_out = nullptr) {
    SampleRing<HistorySample> ring = history_ring();
    TimestampTz complete_since = sampling->history_complete_since;
    if (ring.head() - ring.floor() > ring.capacity()) {
        HistorySample oldest;
        if (ring.oldest(&oldest) && oldest.sample_time + 1 > complete_since) complete_since = oldest.sample_time + 1;
    }
    if (since_out != nullptr) *since_out = complete_since;
    if (from >= complete_since) return true;
    int64 oldest_minute = minute_buckets().oldest_minute();
    if (oldest_minute < 0) return true;
    // The history serves the window unless its ring has lost samples the
    // buckets still have.
    return Max(oldest_minute * USECS_PER_MINUTE, minute_buckets_since()) >= complete_since;
}

// ---- top --------------------------------------------------------------------
// Stops early (returns nullptr, *interrupted set) when an interrupt is
// pending; the caller processes it after agg is gone.
static TopRow *compute_top(TimestampTz from, int limit, size_t *nrows, uint64 *total, bool *interrupted) {
    TopAgg agg;
    if (use_history(from)) {
        history_ring().read_until([&](const HistorySample &h) {
            if (interrupt_pending()) {
                *interrupted = true;
                return false;
            }
            if (h.sample_time >= from) agg.add(h.wait, 1);
            return true;
        });
        if (*interrupted) return nullptr;
    } else {
        std::vector<MinuteBuckets::MinuteCopy> minutes;
        minute_buckets().read(from / USECS_PER_MINUTE, &minutes);
        for (const auto &m : minutes) {
            if (interrupt_pending()) {
                *interrupted = true;
                return nullptr;
            }
            for (const MinuteRow &r : m.rows)
                agg.add(minute_row_wait(r.wait), r.count);
        }
    }
    std::vector<TopRow> rows = agg.result(static_cast<size_t>(limit));
    TopRow *out = palloc_array_nothrow<TopRow>(rows.size());
    std::copy(rows.begin(), rows.end(), out);
    *nrows = rows.size();
    *total = agg.total();
    return out;
}

// ---- timeline ---------------------------------------------------------------
// *covered_from: where the data behind the first bucket starts (the window's
// start, or later when the ring holds samples only since the sampler's start
// or a reset; the minute the window starts in for the minute buckets, or
// where their samples start if later).
static TimelineRow *compute_timeline(TimestampTz from, int64 width, size_t *nrows, int64 *used_width,
                                     TimestampTz *covered_from, bool *interrupted) {
    std::vector<TimelineRow> rows;
    TimestampTz complete_since = from;
    if (use_history(from, &complete_since)) {
        TimelineAgg agg(width);
        history_ring().read_until([&](const HistorySample &h) {
            if (interrupt_pending()) {
                *interrupted = true;
                return false;
            }
            if (h.sample_time >= from) agg.add(h.sample_time, h.wait, 1);
            return true;
        });
        if (*interrupted) return nullptr;
        rows = agg.result();
        *used_width = width;
        *covered_from = Max(from, complete_since);
    } else {
        // Buckets have minute resolution: widths round up to whole minutes
        // (the caller keeps width a minute short of INT64_MAX for this).
        int64 minutes = (width + USECS_PER_MINUTE - 1) / USECS_PER_MINUTE;
        TimelineAgg agg(minutes * USECS_PER_MINUTE);
        std::vector<MinuteBuckets::MinuteCopy> copies;
        minute_buckets().read(from / USECS_PER_MINUTE, &copies);
        for (const auto &m : copies) {
            if (interrupt_pending()) {
                *interrupted = true;
                return nullptr;
            }
            for (const MinuteRow &r : m.rows)
                agg.add(m.minute * USECS_PER_MINUTE, minute_row_wait(r.wait), r.count);
        }
        rows = agg.result();
        *used_width = minutes * USECS_PER_MINUTE;
        *covered_from = Max(from / USECS_PER_MINUTE * USECS_PER_MINUTE, minute_buckets_since());
    }
    TimelineRow *out = palloc_array_nothrow<TimelineRow>(rows.size());
    std::copy(rows.begin(), rows.end(), out);
    *nrows = rows.size();
    return out;
}

// The part of a bucket that has data: the bucket still filling counts up to
// now, the first one from where the data starts. Averaging a partial bucket
// over its full width would under-report it (a minute 10 s old would show a
// sixth of the sessions that waited in it). At least one sample period: a
// bucket a few microseconds old holds a whole sample.
static double bucket_covered_us(TimestampTz start, int64 width, TimestampTz covered_from, TimestampTz now,
                                double period_us) {
    TimestampTz end = start > PG_INT64_MAX - width ? PG_INT64_MAX : start + width;
    double covered = static_cast<double>(Min(end, now)) - static_cast<double>(Max(start, covered_from));
    return Min(Max(covered, period_us), static_cast<double>(width));
}

}  // namespace psw

Datum pg_stat_waits_top(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_top", [&]() -> Datum {
        psw::require_preloaded();
        Interval *since = PG_GETARG_INTERVAL_P(0);
        int32 limit = PG_GETARG_INT32(1);
        if (limit <= 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_top: n must be positive, not %d", limit)));
        TimestampTz from = psw::window_start("pg_stat_waits_top", since);
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        size_t nrows = 0;
        uint64 total = 0;
        psw::TopRow *rows = nullptr;
        psw::interruptible([&](bool *interrupted) { rows = psw::compute_top(from, limit, &nrows, &total, interrupted); });
        for (size_t i = 0; i < nrows; i++) {
            Datum v[4];
            bool n[4] = {false, false, false, false};
            const char *wtype, *wname;
            psw::encoded_wait_names(rows[i].wait, &wtype, &wname);
            v[0] = psw::text_or_null(wtype, &n[0]);
            v[1] = psw::text_or_null(wname, &n[1]);
            v[2] = Int64GetDatum(static_cast<int64>(rows[i].samples));
            v[3] = Float8GetDatum(rows[i].pct);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
        }
        return static_cast<Datum>(0);
    });
}

Datum pg_stat_waits_timeline(PG_FUNCTION_ARGS) {
    return psw::sql_entry("pg_stat_waits_timeline", [&]() -> Datum {
        psw::require_preloaded();
        Interval *since = PG_GETARG_INTERVAL_P(0);
        Interval *bucket = PG_GETARG_INTERVAL_P(1);
        if (bucket->month != 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_timeline: bucket must not contain months or years, not \"%s\"",
                                   psw::interval_text(bucket))));
        // Days and time may have opposite signs ('-1 day 25 hours' is an
        // hour); their sum in microseconds must fit, with a minute to spare
        // for rounding up to the minute buckets.
        int64 width;
        if (pg_mul_s64_overflow(static_cast<int64>(bucket->day), USECS_PER_DAY, &width) ||
            pg_add_s64_overflow(width, bucket->time, &width) || width > PG_INT64_MAX - USECS_PER_MINUTE)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_timeline: bucket is too long, not \"%s\"",
                                   psw::interval_text(bucket))));
        if (width <= 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("pg_stat_waits_timeline: bucket must be a positive interval, not \"%s\"",
                                   psw::interval_text(bucket))));
        TimestampTz now = 0;
        TimestampTz from = psw::window_start("pg_stat_waits_timeline", since, &now);
        InitMaterializedSRF(fcinfo, 0);
        ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
        size_t nrows = 0;
        int64 used_width = width;
        TimestampTz covered_from = from;
        psw::TimelineRow *rows = nullptr;
        psw::interruptible([&](bool *interrupted) {
            rows = psw::compute_timeline(from, width, &nrows, &used_width, &covered_from, interrupted);
        });
        double period_us = psw::sample_period_for_time() * 1000.0;
        for (size_t i = 0; i < nrows; i++) {
            Datum v[5];
            bool n[5] = {false, false, false, false, false};
            const char *wtype, *wname;
            psw::encoded_wait_names(rows[i].wait, &wtype, &wname);
            v[0] = TimestampTzGetDatum(rows[i].bucket_start);
            v[1] = psw::text_or_null(wtype, &n[1]);
            v[2] = psw::text_or_null(wname, &n[2]);
            v[3] = Int64GetDatum(static_cast<int64>(rows[i].samples));
            // Average sessions in this state over the part of the bucket that
            // has data (samples × period / covered time): the bucket still
            // filling is averaged over its elapsed time, not its full width.
            double covered = psw::bucket_covered_us(rows[i].bucket_start, used_width, covered_from, now, period_us);
            v[4] = Float8GetDatum(static_cast<double>(rows[i].samples) * period_us / covered);
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
        }
        return static_cast<Datum>(0);
    });
}

