#include "node_waits.h"

#include <algorithm>

namespace psw {

NodeWaitsSummary summarize_node_waits(const NodeWaits &w, int limit) {
    NodeWaitsSummary s;
    NodeWait all[NodeWaits::kEvents];
    const int n = w.size();
    for (int i = 0; i < n; i++) all[i] = w.at(i);
    std::sort(all, all + n, [](const NodeWait &a, const NodeWait &b) {
        if (a.ns != b.ns) return a.ns > b.ns;
        if (a.calls != b.calls) return a.calls > b.calls;
        return a.index < b.index;
    });
    if (limit < 0) limit = 0;
    // A single event left over prints as itself rather than as "1 other".
    const int shown = n <= limit + (w.other_calls() == 0 ? 1 : 0) ? n : limit;
    for (int i = 0; i < shown; i++) s.top[s.n++] = all[i];
    for (int i = shown; i < n; i++) {
        s.rest_calls += all[i].calls;
        s.rest_ns += all[i].ns;
    }
    if (w.other_calls() != 0) {
        s.rest_calls += w.other_calls();
        s.rest_ns += w.other_ns();
    }
    return s;
}

}  // namespace psw
