// The wrappers' two switches, and where an EXPLAIN (ANALYZE, WAITS) puts
// the waits it times (src/pg/explain/ arms it; the wrappers write it).
//
// pg_stat_waits.timing and a running EXPLAIN (ANALYZE, WAITS) both need the
// wrappers' timed path; neither may cost the other, or a process with
// neither, an instruction. So the wrappers test one byte (wrappers_on: the
// GUC or an armed EXPLAIN), and the timed path another (timed_plain: the
// GUC alone, in a process with its PGPROC), which replaces the test of
// MyProc it made before. Everything else (the postmaster, a process past
// ProcKill, an armed EXPLAIN) takes the timed path's cold branch.
#pragma once

#include "../../core/node_waits.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// pg_stat_waits.timing or an armed EXPLAIN: the wrappers time calls; or
// remote_reads_labelled.
extern bool wrappers_on;
// Citus is preloaded (activity/citus.h): the wrappers tell a wait for
// another server under ClientRead from the wait for the client, timing on
// or off (set once at preload, by timing_install()).
extern bool remote_reads_labelled;
// pg_stat_waits.timing alone, MyProc set, the exit hook registered: the
// timed path's usual case. Cleared by every change of the above and at
// exit; set again by timing_may_go_plain().
extern bool timed_plain;
// Where the waits of an armed EXPLAIN go: the plan node running (the node
// wrappers of src/pg/explain/ switch it), else the waits outside every
// node. nullptr: no EXPLAIN is armed in this process.
extern NodeWaits *explain_target;

// The timed path's cold branch, timing on and no EXPLAIN armed: sets
// timed_plain (registering the exit hook first) and returns true, or
// returns false if the process is exiting (the call is not timed).
bool timing_may_go_plain();

// An EXPLAIN (ANALYZE, WAITS) starts timing this process's waits into
// *outside (and into the node tables it switches explain_target to),
// whatever pg_stat_waits.timing says; disarm stops it. Both are cheap, never
// fail, and may be called when already in that state.
void timing_explain_arm(NodeWaits *outside);
void timing_explain_disarm();

// Recomputes the switches after pg_stat_waits.timing changed.
void timing_switches_changed(bool guc_on);

}  // namespace psw
#pragma GCC visibility pop
