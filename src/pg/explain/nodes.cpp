// The explained query's nodes: each one's ExecProcNodeReal is wrapped at
// ExecutorStart so that the waits inside it go to its table (internal.h),
// in the leader and in each of its parallel workers.
#include <cstdlib>

#include "internal.h"

namespace psw {

static ExecutorStart_hook_type prev_executor_start = nullptr;
static ExecutorEnd_hook_type prev_executor_end = nullptr;

void drop_run() {
    free(run);
    run = nullptr;
}

// A Gather (Merge) that has returned its last row waits for its workers to
// exit when the executor shuts the plan down (ExecShutdownNode, after the
// run): outside every node, though the Gather is the one waiting
// (IPC/BgworkerShutdown), and EXPLAIN charges that time to the Gather. So
// it shuts its workers down here, while its table is the target, as a
// Limit above it does when it has its rows: the executor's later shutdown
// finds nothing left to do, a rescan starts new workers. Not where the
// plan may run backwards, which the executor never shuts down early either.
static void shut_down_workers(PlanState *node) {
    if ((node->state->es_top_eflags & EXEC_FLAG_BACKWARD) != 0) return;
    if (IsA(node, GatherState))
        ExecShutdownGather(castNode(GatherState, node));
    else if (IsA(node, GatherMergeState))
        ExecShutdownGatherMerge(castNode(GatherMergeState, node));
}

// The innermost node running owns a wait: the wrapper makes its table the
// target while its ExecProcNodeReal runs, and gives it back to the node
// that called it (or to the waits outside every node).
static TupleTableSlot *exec_node_timed(PlanState *node) {
    ExplainRun::Node &n = run->nodes[node->plan->plan_node_id];
    if (explain_target == nullptr) return n.real(node);  // disarmed (the EXPLAIN ended early)
    NodeWaits *caller = explain_target;
    explain_target = &n.waits;
    TupleTableSlot *slot = n.real(node);
    if (TupIsNull(slot)) shut_down_workers(node);
    // An error raised below leaves the target on this node: the
    // transaction's end disarms, and the tables are not freed before.
    if (explain_target != nullptr) explain_target = caller;
    return slot;
}

static bool max_node_id(PlanState *ps, void *context) {
    int *max = static_cast<int *>(context);
    if (ps->plan->plan_node_id > *max) *max = ps->plan->plan_node_id;
    return compat_planstate_children(ps, max_node_id, context);
}

static bool wrap_node(PlanState *ps, void *) {
    const int id = ps->plan->plan_node_id;
    if (id >= 0 && id < run->nnodes && ps->ExecProcNodeReal != nullptr && ps->ExecProcNodeReal != exec_node_timed) {
        run->nodes[id].real = ps->ExecProcNodeReal;
        ps->ExecProcNodeReal = exec_node_timed;
    }
    return compat_planstate_children(ps, wrap_node, nullptr);
}

// A run for the plan started in qd, its nodes wrapped; false (nothing
// wrapped) if there is no memory for it.
static bool start_run(QueryDesc *qd) {
    int max = -1;
    (void)max_node_id(qd->planstate, &max);
    if (max < 0) return false;
    const size_t bytes = offsetof(ExplainRun, nodes) + sizeof(ExplainRun::Node) * static_cast<size_t>(max + 1);
    auto *r = static_cast<ExplainRun *>(malloc(bytes));
    if (r == nullptr) return false;
    r->estate = qd->estate;
    r->nnodes = max + 1;
    for (int i = 0; i < r->nnodes; i++) {
        r->nodes[i].real = nullptr;
        r->nodes[i].waits.clear();
    }
    drop_run();
    run = r;
    (void)wrap_node(qd->planstate, nullptr);
    return true;
}

static int leader_procno() {
    const PGPROC *leader = MyProc != nullptr ? MyProc->lockGroupLeader : nullptr;
    return leader != nullptr ? compat_procno_of(leader) : -1;
}

static void executor_start(QueryDesc *qd, int eflags) {
    prev_executor_start(qd, eflags);
    if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 || qd->planstate == nullptr) return;
    if (IsParallelWorker()) {
        // A worker of a leader whose EXPLAIN is still the one in its slot.
        if (worker_token == 0 || run != nullptr ||
            !explain_slot_current(leader_procno(), static_cast<uint32>(worker_token)))
            return;
        outside_waits.clear();
        if (start_run(qd)) timing_explain_arm(&outside_waits);
        return;
    }
    // The explained query: instrumented (ANALYZE), the first to start
    // since the option armed (printing disarms). Queries its nodes run
    // start later, with the run in place; those run during planning have
    // no instrumentation.
    if (armed_es == nullptr || run != nullptr ||
        (qd->instrument_options & (INSTRUMENT_TIMER | INSTRUMENT_ROWS)) == 0)
        return;
    // Its workers, if it has any, start later (in ExecutorRun) and find the
    // tables for their waits in the leader's slot.
    if (start_run(qd) && qd->plannedstmt->parallelModeNeeded) (void)explain_slot_share(run->nnodes);
}

static void executor_end(QueryDesc *qd) {
    if (run == nullptr || qd->estate != run->estate) return prev_executor_end(qd);
    if (IsParallelWorker()) {
        // Before the worker reports it has finished: its leader prints
        // only after every worker has.
        explain_slot_add(leader_procno(), static_cast<uint32>(worker_token), run, outside_waits);
        timing_explain_disarm();
    }
    prev_executor_end(qd);
    drop_run();
}

void ensure_explain_executor_hooks() {
    static bool installed = false;
    if (installed) return;
    installed = true;
    prev_executor_start = ExecutorStart_hook != nullptr ? ExecutorStart_hook : standard_ExecutorStart;
    ExecutorStart_hook = executor_start;
    prev_executor_end = ExecutorEnd_hook != nullptr ? ExecutorEnd_hook : standard_ExecutorEnd;
    ExecutorEnd_hook = executor_end;
}

}  // namespace psw
