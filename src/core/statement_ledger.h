// CPU time and calls of the statements inside one timed top-level
// statement, PostgreSQL-free (exact timing, src/pg/timing/statement_timing.cpp).
//
// Time is cut into segments at every change of the attributed query id, and
// each segment is charged to the id that owned it, so a statement's elapsed
// time is its own: under track = all a nested statement's time is charged to
// it and not to its parent. Waits are attributed to the same current id
// (current()) and reported here as they end (add_wait()), so each segment is
// charged as its elapsed time minus its own waits: that id's CPU time. A row
// holds CPU time itself, not elapsed time to be reduced later, so it stays
// true on its own when the shared table drops or evicts the same id's wait
// rows, or a reset clears waits flushed before the statement ended.
//
// Backend-local, fixed size, no allocation: rows are handed to a spill
// function (the shared per-query table) when the statement ends, or all at
// once when more distinct ids than kRows besides the statement's own were
// touched.
#pragma once

#include <cstdint>

namespace psw {

struct LedgerRow {
    uint64_t queryid;
    uint64_t cpu_ns;  // elapsed time minus the waits, summed over the id's segments
    uint64_t calls;
};

class StatementLedger {
public:
    static constexpr int kRows = 8;

    bool is_open() const { return open_; }
    // The id time is charged to now (0 when closed).
    uint64_t current() const { return open_ ? current_ : 0; }
    uint64_t statement() const { return open_ ? base_ : 0; }
    // The last statement started, open or closed (0: none yet).
    uint64_t last_statement() const { return base_; }

    // A top-level statement starts at `now`; its own id owns the time.
    // queryid is not 0 (0 means "none" throughout).
    void start(uint64_t queryid, int64_t now) {
        open_ = true;
        base_ = queryid;
        current_ = queryid;
        since_ = now;
        segment_waits_ = 0;
        base_row_ = LedgerRow{queryid, 0, 0};
        n_ = 0;
    }

    // A wait of ns ended, attributed to current(): it is not the current
    // segment's CPU time. Waits a statement adopts from before its start
    // (timing/wrapper.h) lie inside its first segment too.
    void add_wait(uint64_t ns) { segment_waits_ += ns; }

    // From `now` on, time belongs to queryid (0: the top-level statement).
    template <typename Spill>
    void switch_to(uint64_t queryid, int64_t now, Spill &&spill) {
        if (!open_) return;
        if (queryid == 0) queryid = base_;
        if (queryid == current_) return;
        charge(now, spill);
        current_ = queryid;
    }

    // One execution of queryid finished.
    template <typename Spill>
    void count_call(uint64_t queryid, Spill &&spill) {
        if (!open_ || queryid == 0) return;
        row(queryid, spill)->calls++;
    }

    // If queryid is the open statement's own id, one execution of it
    // finished: counted, and true. (An open statement's id is never 0, so
    // 0 is never counted here.)
    bool count_own_call(uint64_t queryid) {
        if (!open_ || queryid != base_) return false;
        base_row_.calls++;
        return true;
    }

    // One top-level execution of queryid finished: whether it was the
    // statement's own id (the common case, tested first).
    template <typename Spill>
    bool count_top_call(uint64_t queryid, Spill &&spill) {
        if (__builtin_expect(count_own_call(queryid), 1)) return true;
        count_other_call(queryid, spill);
        return false;
    }

    // The statement is over at `now`: charge the last segment and hand every
    // row to spill(const LedgerRow &).
    template <typename Spill>
    void close(int64_t now, Spill &&spill) {
        if (open_) close_open(now, spill);
    }

    // The same, for a caller that knows the statement is open (exact
    // timing's own flag says so: one test per statement end, not two).
    template <typename Spill>
    void close_open(int64_t now, Spill &&spill) {
        open_ = false;
        if (__builtin_expect(n_ != 0 || current_ != base_, 0)) return close_nested(now, spill);
        // Time never left the statement's own id: one row.
        // (since_ and segment_waits_ are left as they are: nothing reads
        // them before the next start.)
        base_row_.cpu_ns += segment_cpu(now);
        if (base_row_.cpu_ns != 0 || base_row_.calls != 0) spill(base_row_);
    }

    int rows_used() const { return n_; }

private:
    bool open_ = false;
    uint64_t base_ = 0;
    uint64_t current_ = 0;
    int64_t since_ = 0;
    uint64_t segment_waits_ = 0;  // waits that ended in the current segment
    int n_ = 0;
    LedgerRow base_row_ = {};  // the top-level statement's own row (the common case: no search)
    LedgerRow rows_[kRows] = {};  // other ids (nested statements, a cursor's query)

    // The uncommon paths out of line, so the common ones save no register.
    template <typename Spill>
    __attribute__((noinline)) void count_other_call(uint64_t queryid, Spill &spill) {
        count_call(queryid, spill);
    }

    template <typename Spill>
    __attribute__((noinline)) void close_nested(int64_t now, Spill &spill) {
        charge(now, spill);
        drain(spill);
        if (base_row_.cpu_ns != 0 || base_row_.calls != 0) spill(base_row_);
    }

    // The current segment's CPU time at now: its elapsed time less its
    // waits. A wait lies inside the segment it ended in (ids change only in
    // the backend's own code, never during a blocking call), so the
    // difference is not negative; 0 if a clock step ever made it so.
    uint64_t segment_cpu(int64_t now) const {
        const int64_t cpu = (now - since_) - static_cast<int64_t>(segment_waits_);
        return cpu > 0 ? static_cast<uint64_t>(cpu) : 0;
    }

    template <typename Spill>
    void charge(int64_t now, Spill &spill) {
        const uint64_t cpu = segment_cpu(now);
        if (cpu != 0) row(current_, spill)->cpu_ns += cpu;
        since_ = now;
        segment_waits_ = 0;
    }

    template <typename Spill>
    LedgerRow *row(uint64_t queryid, Spill &spill) {
        if (queryid == base_) return &base_row_;
        for (int i = 0; i < n_; i++)
            if (rows_[i].queryid == queryid) return &rows_[i];
        if (n_ == kRows) drain(spill);
        rows_[n_] = LedgerRow{queryid, 0, 0};
        return &rows_[n_++];
    }

    template <typename Spill>
    void drain(Spill &spill) {
        for (int i = 0; i < n_; i++)
            if (rows_[i].cpu_ns != 0 || rows_[i].calls != 0) spill(rows_[i]);
        n_ = 0;
    }
};

}  // namespace psw
