// Samples taken before their statement had an id, given it once it is known.
//
// Why: parse analysis opens a statement's tables before PostgreSQL has its
// query id, so a statement queued behind another session's lock (a
// migration's ACCESS EXCLUSIVE, the classic stall) waits with no id: its
// samples would count under a NULL queryid for as long as it waits, which
// hides exactly the statements a DBA looks for afterwards. The sampler
// notes such samples per process; when a later tick finds that process's
// statement with an id (PostgreSQL's own entry keeps it, even idle, after
// the statement ended), the samples get it: in the history ring in place,
// and moved from the NULL-id key to the statement's in the profile and the
// minute buckets, totals unchanged. The same statement: for one query
// message, the same start; else the next run of the same text with an id (a Parse's
// Bind and Execute, each message restarting the clock, or the same query
// run again after the first run failed in its wait, a ROLLBACK or other
// statements in between or not: the text makes the queryid, so the samples
// are that query's either way). The rule does not depend on which moments
// the ticks happen to catch: other statements in between change nothing,
// whether a tick saw them or not. A run of the text that waits with no id
// again (a retry blocked again) adds its samples to the same note.
//
// Samples are left with no id when the process exits, runs no statement of
// that text with an id within a minute of the last sample, waits with no id
// in another statement (whose samples are noted instead), or a reset
// intervenes. Work is done only for processes with such samples; a tick
// that gives ids scans the history written since the oldest of them
// (bounded by the ring).
#include "sampling.h"

#include <algorithm>

#include "../activity/proc_reader.h"

namespace psw {

namespace {

// Samples of one process's statement that have no id yet, by minute and
// wait event (a long wait spans minutes; one wait event mostly).
struct LatePart {
    int64 minute;
    uint32 wait;
    uint32 count;
};
constexpr int kLateParts = 16;

struct LateStatement {
    TimestampTz first_start;  // start of the first run noted (retries of the text may follow)
    TimestampTz query_start;  // and of the latest
    uint64 text_key;
    TimestampTz other_start;  // start of the latest statement read with another text
    TimestampTz stats_reset;  // a reset in between forgets the samples
    TimestampTz last_sample;  // when the latest was taken
    uint64 first_pos;  // history ring positions of the first and last sample
    uint64 last_pos;
    ProfileKey key;  // the NULL-id profile key (wait set per part)
    int nparts;
    LatePart parts[kLateParts];
};

// A statement found with its id this tick, with what the history pass
// matches its samples by (sorted by pid there). Preallocated: the pass runs
// inside the sampler's write section, where nothing may throw.
struct LateAdoption {
    uint32 procno;
    int32 pid;
    TimestampTz first_start;
    TimestampTz query_start;
    uint64 queryid;
};

LateStatement *late = nullptr;  // per procno
LateAdoption *adoptions = nullptr;
uint32 nadoptions = 0;
uint32 capacity = 0;

// Statements newly noted per tick at most: each reads its process's text
// once. Under heavy contention many backends can wait in parse analysis at
// once (a lock manager LWLock); past this, their samples keep no id rather
// than make the tick long.
constexpr uint32 kNewPerTick = 64;

// How long after its latest sample a statement's samples wait for a run of
// its text to show the id.
constexpr TimestampTz kKeepUsecs = 60 * USECS_PER_SEC;
uint32 new_this_tick = 0;

}  // namespace

// Per procno: the pid whose samples are noted (0: none), apart from the
// rest so that the sampler's per-process test reads a small dense array.
int32 *late_ids_pid = nullptr;

void late_ids_init(uint32 n) {
    capacity = n;
    late_ids_pid = static_cast<int32 *>(MemoryContextAllocZero(TopMemoryContext, sizeof(int32) * n));
    late = static_cast<LateStatement *>(MemoryContextAllocZero(TopMemoryContext, sizeof(LateStatement) * n));
    adoptions = static_cast<LateAdoption *>(MemoryContextAllocZero(TopMemoryContext, sizeof(LateAdoption) * n));
}

bool late_ids_candidate(const HistorySample &h) {
    return h.backend_type == B_BACKEND && h.state == kStateActive && h.queryid == 0 && h.leader_pid == 0 &&
           h.wait != 0 && h.query_start != 0;
}

void late_ids_observe(uint32 procno, const ProcSample *s, TimestampTz now) {
    if (procno >= capacity || !late_ids_watching(procno)) return;
    LateStatement &l = late[procno];
    int32 &pid = late_ids_pid[procno];
    // Gone, or no statement of that text for a minute: let go.
    if (s == nullptr || s->pid != pid || now - l.last_sample > kKeepUsecs) {
        pid = 0;
        return;
    }
    // Still waiting without an id (noted after the tick's write).
    if (s->queryid == 0 && s->state == kStateActive && s->query_start == l.query_start) return;
    ServerStatement st;
    if (!read_server_statement(procno, pid, false, &st)) return;  // try again next tick
    if (st.start != l.query_start) {
        // A later message: of the same text (a Bind and Execute after the
        // Parse that waited, the same statement run again after an error),
        // or another statement, read once, after which a run of the text
        // may still come.
        if (st.start == l.other_start) return;
        ServerStatement with_text;
        if (!read_server_statement(procno, pid, true, &with_text) || with_text.start != st.start) return;
        if (with_text.text_key != l.text_key) {
            l.other_start = st.start;
            return;
        }
        st = with_text;
    }
    // No id yet (parse analysis on the CPU), or none for that run (it
    // failed before parse analysis ended: idle with no id): keep waiting
    // for a run of the same text to show it.
    if (st.queryid == 0) return;
    if (l.stats_reset == shared->stats_reset)
        adoptions[nadoptions++] = LateAdoption{procno, pid, l.first_start, l.query_start, st.queryid};
    else
        pid = 0;
}

void late_ids_note(uint32 procno, const HistorySample &h, uint64 pos, int64 minute) {
    if (procno >= capacity) return;
    LateStatement &l = late[procno];
    int32 &pid = late_ids_pid[procno];
    if (pid != h.pid || l.query_start != h.query_start) {
        // A statement newly waiting with no id: a run of the text already
        // noted (a retry blocked again) adds to the note; another starts one.
        const bool watched = pid == h.pid && l.stats_reset == shared->stats_reset;
        ServerStatement st;
        pid = 0;
        if (new_this_tick == kNewPerTick) return;
        new_this_tick++;
        if (!read_server_statement(procno, h.pid, true, &st) || st.start != h.query_start) return;
        if (!watched || st.text_key != l.text_key) {
            l.first_start = h.query_start;
            l.text_key = st.text_key;
            l.stats_reset = shared->stats_reset;
            l.first_pos = pos;
            memset(&l.key, 0, sizeof(l.key));
            l.key.datid = h.datid;
            l.key.usesysid = h.usesysid;
            l.key.backend_type = h.backend_type;
            l.nparts = 0;
        }
        pid = h.pid;
        l.query_start = h.query_start;
        l.other_start = 0;
    }
    l.last_pos = pos;
    l.last_sample = h.sample_time;
    for (int i = 0; i < l.nparts; i++) {
        if (l.parts[i].minute == minute && l.parts[i].wait == h.wait) {
            l.parts[i].count++;
            return;
        }
    }
    if (l.nparts == kLateParts) {
        pid = 0;  // more minutes and events than noted: leave them as they are
        return;
    }
    l.parts[l.nparts++] = LatePart{minute, h.wait, 1};
}

void late_ids_apply(SampleRing<HistorySample> &ring, FixedHashTable<ProfileKey> &profile, MinuteBuckets buckets) {
    new_this_tick = 0;  // apply() opens each tick's notes
    if (nadoptions == 0) return;
    uint64 from = UINT64_MAX, to = 0;
    for (uint32 a = 0; a < nadoptions; a++) {
        const LateStatement &l = late[adoptions[a].procno];
        from = Min(from, l.first_pos);
        to = Max(to, l.last_pos);
        for (int i = 0; i < l.nparts; i++) {
            const LatePart &part = l.parts[i];
            // The profile: from the NULL-id key to the id's.
            ProfileKey k = l.key;
            k.wait = part.wait;
            uint64 taken = profile.take(k, part.count);
            ProfileKey own = k;
            own.queryid = adoptions[a].queryid;
            if (taken > 0 && !profile.add(own, taken)) profile.add(k, taken);  // no room: they stay where they were
            buckets.move(part.minute, part.wait, 0, adoptions[a].queryid, part.count);
        }
    }
    // The history: one pass over what was written since the oldest sample,
    // for all the statements at once (the ring bounds it), each sample's
    // process found by binary search.
    LateAdoption *const end = adoptions + nadoptions;
    std::sort(adoptions, end, [](const LateAdoption &x, const LateAdoption &y) { return x.pid < y.pid; });
    uint64 head = ring.head();
    if (head > ring.capacity() && from < head - ring.capacity()) from = head - ring.capacity();
    for (uint64 p = from; p <= to && p < head; p++) {
        ring.rewrite(p, [&](HistorySample &h) {
            // Only samples in a wait, as noted: the profile moves no others.
            if (h.queryid != 0 || h.state != kStateActive || h.wait == 0) return false;
            const LateAdoption *f =
                std::lower_bound(adoptions, end, h.pid, [](const LateAdoption &x, int32 pid) { return x.pid < pid; });
            // Between the first run noted and the latest, every sample of
            // the process in a wait with no id was of the text: another
            // text's would have replaced the note.
            if (f == end || f->pid != h.pid || h.query_start < f->first_start || h.query_start > f->query_start)
                return false;
            h.queryid = f->queryid;
            h.top_queryid = f->queryid;
            return true;
        });
    }
    for (uint32 a = 0; a < nadoptions; a++) late_ids_pid[adoptions[a].procno] = 0;
    nadoptions = 0;
}

}  // namespace psw
