// Live wait time of a process for pg_stat_waits_activity.wait_time.
// Placeholder until exact timing publishes wait starts: always NULL.
#include "proc_reader.h"

namespace psw {

double live_wait_ms(const ProcSample &, bool *valid) {
    *valid = false;
    return 0.0;
}

}  // namespace psw
