// The waits of one plan node under EXPLAIN (ANALYZE, WAITS), PostgreSQL-free:
// a few events, each with its calls and time, and what did not fit.
//
// Why this shape: a plan may have hundreds of nodes, each waiting on a
// handful of events at most, and the table is written from inside every
// blocking call the node makes. A small array searched linearly (the last
// event hit is usually hit again: it is tried first) keeps a node to a few
// hundred bytes and an add to a few compares, with no allocation. Events
// past the array's room are summed in one "other" slot, so no time is lost,
// only its breakdown.
#pragma once

#include <cstdint>

namespace psw {

struct NodeWait {
    uint16_t index;  // dense wait index (wait_catalog.h)
    uint64_t calls;
    uint64_t ns;
};

class NodeWaits {
public:
    static constexpr int kEvents = 12;

    void clear() {
        n_ = 0;
        last_ = 0;
        other_calls_ = 0;
        other_ns_ = 0;
    }

    void add(uint16_t idx, uint64_t calls, uint64_t ns) {
        if (last_ < n_ && items_[last_].index == idx) {
            items_[last_].calls += calls;
            items_[last_].ns += ns;
            return;
        }
        for (uint8_t i = 0; i < n_; i++) {
            if (items_[i].index == idx) {
                last_ = i;
                items_[i].calls += calls;
                items_[i].ns += ns;
                return;
            }
        }
        if (n_ == kEvents) {
            other_calls_ += calls;
            other_ns_ += ns;
            return;
        }
        last_ = n_;
        items_[n_++] = NodeWait{idx, calls, ns};
    }

    // Waits whose event is not known (summed elsewhere already).
    void add_other(uint64_t calls, uint64_t ns) {
        other_calls_ += calls;
        other_ns_ += ns;
    }

    int size() const { return n_; }
    const NodeWait &at(int i) const { return items_[i]; }
    uint64_t other_calls() const { return other_calls_; }
    uint64_t other_ns() const { return other_ns_; }
    bool empty() const { return n_ == 0 && other_calls_ == 0; }

private:
    uint8_t n_ = 0;
    uint8_t last_ = 0;
    NodeWait items_[kEvents];
    uint64_t other_calls_ = 0;
    uint64_t other_ns_ = 0;
};

// What one node prints: its `limit` heaviest events (by time, then calls,
// then index, so the order is stable), and the rest summed.
struct NodeWaitsSummary {
    int n = 0;
    NodeWait top[NodeWaits::kEvents];
    uint64_t rest_calls = 0;
    uint64_t rest_ns = 0;
};
NodeWaitsSummary summarize_node_waits(const NodeWaits &w, int limit);

}  // namespace psw
