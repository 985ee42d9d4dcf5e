// Aggregations behind pg_stat_waits_top and pg_stat_waits_timeline, fed
// either from the history ring (sample by sample) or from minute buckets
// (rows with counts). PostgreSQL-free so the arithmetic is unit-tested.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace psw {

struct TopRow {
    uint32_t wait;
    uint64_t samples;
    double pct;  // of all samples in the window
};

class TopAgg {
public:
    void add(uint32_t wait, uint64_t n) {
        counts_[wait] += n;
        total_ += n;
    }
    uint64_t total() const { return total_; }
    // The n largest, ties by wait id; pct of the window total.
    std::vector<TopRow> result(size_t n) const {
        std::vector<TopRow> rows;
        for (const auto &kv : counts_) rows.push_back(TopRow{kv.first, kv.second, 0.0});
        std::sort(rows.begin(), rows.end(), [](const TopRow &a, const TopRow &b) {
            return a.samples != b.samples ? a.samples > b.samples : a.wait < b.wait;
        });
        if (rows.size() > n) rows.resize(n);
        for (auto &r : rows) r.pct = total_ ? 100.0 * static_cast<double>(r.samples) / static_cast<double>(total_) : 0.0;
        return rows;
    }

private:
    std::unordered_map<uint32_t, uint64_t> counts_;
    uint64_t total_ = 0;
};

struct TimelineRow {
    int64_t bucket_start;  // same unit as the times fed in
    uint32_t wait;
    uint64_t samples;
};

class TimelineAgg {
public:
    // width > 0; buckets are aligned to multiples of width.
    explicit TimelineAgg(int64_t width) : width_(width) {}
    int64_t bucket_of(int64_t t) const {
        int64_t q = t / width_;
        if (t % width_ != 0 && t < 0) q--;
        return q * width_;
    }
    void add(int64_t t, uint32_t wait, uint64_t n) { counts_[{bucket_of(t), wait}] += n; }
    // Oldest bucket first, then by samples descending.
    std::vector<TimelineRow> result() const {
        std::vector<TimelineRow> rows;
        for (const auto &kv : counts_) rows.push_back(TimelineRow{kv.first.first, kv.first.second, kv.second});
        std::stable_sort(rows.begin(), rows.end(), [](const TimelineRow &a, const TimelineRow &b) {
            if (a.bucket_start != b.bucket_start) return a.bucket_start < b.bucket_start;
            return a.samples > b.samples;
        });
        return rows;
    }

private:
    int64_t width_;
    std::map<std::pair<int64_t, uint32_t>, uint64_t> counts_;
};

}  // namespace psw
