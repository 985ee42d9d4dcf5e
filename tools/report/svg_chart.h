// Inline SVG charts for the HTML report: the stacked area chart of average
// active sessions by wait event type, wait-duration histograms and the
// horizontal breakdown bars. Pure functions of their input (unit-tested).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model.h"

namespace psw_report {

std::string html_escape(const std::string &s);

// Colour of a wait event type: fixed for the known PostgreSQL classes (CPU
// green, IO blue, Lock red... as in ASH charts), stable hash for others.
std::string wait_type_color(const std::string &wait_event_type);
// Stacking order: CPU at the bottom, then I/O, locks, ...; unknown types last.
int wait_type_rank(const std::string &wait_event_type);

// An axis from 0 to `max` in `step`s, with max >= the data's maximum.
struct NiceScale {
    double max = 1;
    double step = 0.25;
};
NiceScale nice_scale(double data_max, int target_ticks = 5);

// The timeline on a regular grid of buckets, one layer per wait event type,
// stacked in wait_type_rank order; buckets without a point are 0.
struct StackedLayer {
    std::string wait_event_type;
    std::vector<double> lower;
    std::vector<double> upper;
};
struct StackedGrid {
    double first_bucket = 0;  // epoch seconds
    double bucket_s = 60;
    size_t buckets = 0;
    std::vector<StackedLayer> layers;  // bottom first; only types with data
    double max_total = 0;
};
// `until` extends the grid with empty buckets up to the bucket holding it.
// `order`, when given, stacks the layers in that order (bottom first)
// instead of by wait type (for slices that are not wait classes).
StackedGrid stack_timeline(const std::vector<TimelinePoint> &points, double bucket_s, double until,
                           const std::vector<std::string> &order = {});

struct ChartOptions {
    int width = 960;
    int height = 320;
    double utc_offset_s = 0;  // labels in the server's time zone
    std::string timezone_label;
    double cpu_line = 0;  // > 0: a dashed line at the server's CPU count
    std::map<std::string, std::string> colors;  // layer -> colour; others by wait type
};

// A colour for the i-th band of a slice that is not a wait class.
std::string palette_color(size_t i);

std::string stacked_area_svg(const StackedGrid &grid, const ChartOptions &opt);
std::string histogram_svg(const Histogram &h, int width = 460, int height = 180);
// One horizontal bar per wait event (value = samples), coloured by type.
std::string event_bars_svg(const std::vector<TopEvent> &rows, const std::string &unit, int width = 720);
// A horizontal bar split by wait event type (values summed per type).
std::string breakdown_bar_svg(const std::vector<QueryWait> &breakdown, double scale_total, int width = 240,
                              int height = 14);

// One run as a horizontal bar split by wait event (one segment per part,
// coloured by its type; value in ms), scaled so scale_ms fills the width.
std::string run_bar_svg(const std::vector<QueryWait> &parts, double scale_ms, int width = 360, int height = 14);

}  // namespace psw_report
