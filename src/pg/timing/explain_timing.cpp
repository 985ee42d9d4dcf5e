// The wrappers' switches and an EXPLAIN (ANALYZE, WAITS)'s arming
// (explain_timing.h).
#include "local.h"

namespace psw {

bool wrappers_on = false;
bool remote_reads_labelled = false;
bool timed_plain = false;
NodeWaits *explain_target = nullptr;

bool timing_may_go_plain() {
    if (!guc_timing || proc_exit_inprogress) return false;
    // The exit hook clears timed_plain again before PostgreSQL detaches the
    // process from shared memory.
    if (!exit_hook_registered) register_exit_hook();
    timed_plain = true;
    return true;
}

void timing_switches_changed(bool guc_on) {
    wrappers_on = guc_on || explain_target != nullptr || remote_reads_labelled;
    timed_plain = false;
}

void timing_explain_arm(NodeWaits *outside) {
    explain_target = outside;
    timing_flags.explain = true;
    wrappers_on = true;
    timed_plain = false;
}

void timing_explain_disarm() {
    if (explain_target == nullptr) return;
    explain_target = nullptr;
    timing_flags.explain = false;
    timing_switches_changed(guc_timing);
}

}  // namespace psw
