// Exact timing: blocking-call wrappers installed in the executable's GOT at
// preload (wrapper.h, wrappers.cpp), backend-local accumulators flushed into
// shared tables (local.h, local_flush.cpp), statements timed from the
// boundaries the statement hooks report (statement_timing.cpp), the shared
// tables (timing_shmem.cpp), the SQL readers (timing_views.cpp).
// docs/architecture.md follows one timed wait through these files.
#pragma once

#include <cstdint>
#include <cstdio>

#include "../shared_state.h"
#include "../statements/statements.h"
#include "../../core/executions.h"
#include "../../core/statement_ledger.h"
#include "../../core/timing_stats.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

struct ProcSample;  // activity/proc_reader.h

extern const ShmemPart timing_part;

// Shared timing tables (nullptr until shared memory exists).
struct TimingShared {
    // Bumped by a reader that wants every backend's held CPU rows
    // (timing_collect_held_rows()).
    uint32 flush_request;
    SharedEvents events;
    // QueryTable follows at kQueryTableOffset.
};
extern TimingShared *timing_shared;
constexpr Size kQueryTableOffset = MAXALIGN(sizeof(TimingShared));
inline QueryTable *timing_query_table() {
    return reinterpret_cast<QueryTable *>(reinterpret_cast<char *>(timing_shared) + kQueryTableOffset);
}

// Preload (postmaster only, the timing feature's start: features.cpp): patch the GOT.
void timing_install();

// The settings of exact timing (statement_timing.cpp), defined at preload
// with the timer the statement hooks call (statements/timer.h).
extern bool guc_timing;
// Slow executions (pg_stat_waits_executions): the GUC in ms, and the same
// threshold in ns as the statement end compares it (INT64_MAX when off).
constexpr int kCaptureMinDurationDefaultMs = 1000;
extern int guc_capture_min_duration_ms;
extern int64_t capture_min_ns;
// Also write each kept run to the server log (one LOG line).
extern bool guc_capture_log;
void define_timing_gucs();

// Publishes what this process has accumulated and not yet flushed: a
// session reading the exact views sees its own waits, and timing turned
// off leaves nothing behind (other sessions see a backend's waits once it
// has been idle 10 ms, or within a second). No error, no allocation.
void timing_flush_own();

// Waits (at most about 100 ms) until the other backends have published the
// CPU rows of the statements they finished: a backend holds them until it
// has waited kIdleFlushMs for its client, or until its next wait for its
// client once a reader has asked. So a reader sees every statement that
// ended before it began, and a busy backend pays for no shared update per
// statement. A backend inside one long statement with no blocking call may
// publish later (within a second of its next call).
void timing_collect_held_rows();

// One bounded eviction step of the per-query table (at most max_visits
// slots), from the sampler's evict_tables_step(); backends never evict.
void timing_evict_step(uint64 max_visits);

// Clears the shared timing tables (pg_stat_waits_reset()).
void timing_reset();
// Persistence inside pg_stat/pg_stat_waits.stat: timing_save writes one
// self-describing block (magic, format version, sizes) at the current file
// position; timing_load reads such a block and merges it into the (fresh)
// tables. Both return false on I/O error or a block from another format;
// after a false load the caller should discard the rest of the file.
bool timing_save(FILE *f);
bool timing_load(FILE *f);

// The clock of exact timing (ns, CLOCK_MONOTONIC base; RDTSC-based where
// the TSC is invariant), the same in every process.
int64 timing_now_ns();
const char *timing_clock_name();  // "tsc" or "clock_gettime"

// Slow executions (executions.cpp): the last kExecRingSize top-level runs
// that reached pg_stat_waits.capture_min_duration.
constexpr uint32 kExecRingSize = 1000;
extern const ShmemPart executions_part;
// A top-level statement of queryid, run by this session, ended after elapsed_ns
// (at least the threshold) having waited `waits`: keep it, with the text
// the backend is running unless own_text is false (its end was seen only
// when the next statement began, whose text that is by then). first_start:
// PostgreSQL's statement start when the run's first wait began, if that
// came before the statement had begun (a wait in its Parse or Bind
// message, whose start PostgreSQL has replaced since), else 0. Never
// raises an error, never allocates.
void executions_capture(const StatementWaits &waits, int64 elapsed_ns, uint64 queryid, bool own_text,
                        TimestampTz first_start);
// With pg_stat_waits.capture_log, a captured run waits here for its LOG
// line: capture cannot log (it may run inside a commit callback, where an
// error would be a PANIC). The line is written at the next point where
// logging is safe: the backend's next statement start or parse analysis,
// its next wait for the client (timing on) or its exit. Pending while
// timing_flags.log_pending.
void executions_write_log();
void executions_reset();
// The ring (nullptr until shared memory exists), for persistence.
ExecRing *executions_ring();
uint64 executions_dropped();

// Milliseconds spent so far in the blocking call s is inside, for
// pg_stat_waits_activity.wait_time; *valid is false when s publishes none
// (local_flush.cpp).
double live_wait_ms(const ProcSample &s, bool *valid);

}  // namespace psw
#pragma GCC visibility pop
