// Printing: each node's waits after its own lines, the waits outside every
// node after the plan (docs/explain.md has the format). The option's
// callbacks and their installation are here too: printing is what the
// option is for.
#include "../wait_names.h"
#include "internal.h"

namespace psw {

namespace {

// A node prints at most this many events; the rest are summed.
constexpr int kEventsShown = 5;

double ms(uint64 ns) { return static_cast<double>(ns) / 1e6; }

void text_item(StringInfo out, const char *type, const char *event, uint64 ns, uint64 calls) {
    if (out->len > 0) appendStringInfoString(out, ", ");
    if (event != nullptr)
        appendStringInfo(out, "%s/%s", type, event);
    else
        appendStringInfoString(out, type);
    appendStringInfo(out, " %.3f ms (" UINT64_FORMAT " %s)", ms(ns), calls, calls == 1 ? "call" : "calls");
}

void structured_item(ExplainState *es, const char *type, const char *event, uint64 ns, uint64 calls) {
    ExplainOpenGroup("Wait", nullptr, true, es);
    ExplainPropertyText("Wait Event Type", type, es);
    ExplainPropertyText("Wait Event", event, es);
    ExplainPropertyFloat("Time", "ms", ms(ns), 3, es);
    ExplainPropertyUInteger("Calls", nullptr, calls, es);
    ExplainCloseGroup("Wait", nullptr, true, es);
}

// label: "Waits" on a node, "Waits Outside Nodes" at plan level. Text
// prints a line only when there were waits; the other formats always
// print the list (empty: none), so that its key is always there.
void print_waits(ExplainState *es, const char *label, const NodeWaits &w) {
    const NodeWaitsSummary s = summarize_node_waits(w, kEventsShown);
    if (es->format == EXPLAIN_FORMAT_TEXT) {
        if (s.n == 0 && s.rest_calls == 0) return;
        StringInfoData line;
        initStringInfo(&line);
        for (int i = 0; i < s.n; i++) {
            const char *type, *event;
            index_names(s.top[i].index, &type, &event);
            text_item(&line, type, event, s.top[i].ns, s.top[i].calls);
        }
        if (s.rest_calls != 0) text_item(&line, "other events", nullptr, s.rest_ns, s.rest_calls);
        ExplainPropertyText(label, line.data, es);
        pfree(line.data);
        return;
    }
    ExplainOpenGroup(label, label, false, es);
    for (int i = 0; i < s.n; i++) {
        const char *type, *event;
        index_names(s.top[i].index, &type, &event);
        structured_item(es, type, event, s.top[i].ns, s.top[i].calls);
    }
    if (s.rest_calls != 0) structured_item(es, "Other", "other events", s.rest_ns, s.rest_calls);
    ExplainCloseGroup(label, label, false, es);
}

// Ours to print: the armed EXPLAIN, and a node of the query it ran.
bool ours(ExplainState *es) { return es == armed_es && run != nullptr; }

// The workers' waits, into the leader's tables: the first call takes them
// all (every worker has ended before EXPLAIN prints), later ones find none.
void take_workers() { explain_slot_take(run, &outside_waits); }

void per_node(PlanState *planstate, ExplainState *es) {
    if (!ours(es) || planstate->state != run->estate) return;
    take_workers();
    const int id = planstate->plan->plan_node_id;
    if (id < 0 || id >= run->nnodes) return;
    // A node run through MultiExecProcNode (Hash, the Bitmap nodes) has
    // no ExecProcNodeReal call: its waits are its parent's.
    print_waits(es, "Waits", run->nodes[id].waits);
}

void per_plan(PlannedStmt *, ExplainState *es) {
    if (es != armed_es) return;
    // The plan is printed: what follows (ExecutorEnd, the commit) is not
    // shown, so the waits outside nodes end here (disarmed, nothing adds
    // to them).
    take_workers();
    explain_printed();
    print_waits(es, "Waits Outside Nodes", outside_waits);
}

const ExplainOptionCallbacks callbacks = {explain_requested, explain_query_starts, per_node, per_plan};

}  // namespace

void define_explain_settings() {
    if (compat_has_explain_options()) define_explain_token_setting();
}

void install_explain_waits() { compat_explain_install("waits", &callbacks); }

}  // namespace psw
