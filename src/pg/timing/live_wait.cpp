// Live wait time of a process for pg_stat_waits_activity.wait_time: how long
// the blocking call it is inside has lasted. Only processes with exact timing
// on publish a start (the wrapper stores it before the real call and clears
// it after); the start counts only while the process still reports the wait
// event the call began under, so a stale or torn pair never shows.
#include "../activity/proc_reader.h"
#include "timing.h"

namespace psw {

double live_wait_ms(const ProcSample &s, bool *valid) {
    *valid = false;
    if (s.wait_start_ns == 0 || s.wait_event_info == 0 || s.wait_start_info != s.wait_event_info) return 0.0;
    int64 now = timing_now_ns();  // the wrappers' clock
    if (now < s.wait_start_ns) return 0.0;
    *valid = true;
    return static_cast<double>(now - s.wait_start_ns) / 1e6;
}

}  // namespace psw
