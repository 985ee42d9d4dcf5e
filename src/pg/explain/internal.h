// EXPLAIN (ANALYZE, WAITS)'s parts, shared by this folder's files only.
//
// One EXPLAIN, in the leader: the option arms timing (arming.cpp): from then
// on every wait of the process is timed into `outside`. The explained
// query's ExecutorStart wraps each plan node's ExecProcNodeReal (nodes.cpp),
// so the waits inside a node go to that node's table (the innermost node
// running owns a wait). Its parallel workers learn of the EXPLAIN through a
// setting they inherit (pg_stat_waits.explain_token), wrap their own nodes
// the same way and add their tables, when they end, to the leader's shared
// tables for its plan (shared.cpp); printing (print.cpp) adds them to the
// leader's own. The per-plan hook prints the waits outside every node and
// disarms.
#pragma once

#include <string>  // before PostgreSQL's port.h (wait_catalog.h uses it)

#include "../compat_explain.h"
#include "../timing/explain_timing.h"
#include "explain.h"

#pragma GCC visibility push(hidden)  // our own declarations: see docs/architecture.md
namespace psw {

// The nodes of one explained query in this process: their tables and the
// ExecProcNodeReal each wrapper calls, by plan_node_id. malloc'd, so that
// the tables outlive an error's release of the query's memory until the
// transaction's end has disarmed timing.
struct ExplainRun {
    EState *estate;
    int nnodes;  // plan_node_ids 0 .. nnodes - 1
    struct Node {
        ExecProcNodeMtd real;
        NodeWaits waits;
    } nodes[1];
};

// ---- arming.cpp --------------------------------------------------------------------
// The EXPLAIN armed in this process (its ExplainState in the leader; the
// token of its leader's in a worker), the waits outside every node, and
// the explained query's nodes once its executor started.
extern ExplainState *armed_es;
extern uint32 armed_token;
extern NodeWaits outside_waits;
extern ExplainRun *run;
void disarm_explain();
// The option's callbacks (compat_explain.h) that arm, and the per-plan
// hook's end.
void explain_requested(ExplainState *es);
void explain_query_starts(ExplainState *es);
void explain_printed();
// Preload: pg_stat_waits.explain_token.
void define_explain_token_setting();
// A parallel worker: the token of its leader's EXPLAIN (0: none).
extern int worker_token;

// ---- nodes.cpp ---------------------------------------------------------------------
// Installs the executor hooks (once per process, when first needed).
void ensure_explain_executor_hooks();
// Forgets a run (freeing its nodes).
void drop_run();

// ---- shared.cpp --------------------------------------------------------------------
// The leader (this process) starts an EXPLAIN: a new token in its slot.
uint32 explain_slot_open();
// Its explained query's plan is parallel: tables for its workers' waits,
// one per node (false: none, the workers' waits are not shown).
bool explain_slot_share(int nnodes);
// The leader's EXPLAIN is over: its slot takes no more, its workers'
// tables go.
void explain_slot_close();
// A worker of the leader at procno, for the EXPLAIN of token: true if
// that EXPLAIN is still the one in the slot.
bool explain_slot_current(int leader_procno, uint32 token);
// A worker adds its run and its waits outside nodes to its leader's slot.
void explain_slot_add(int leader_procno, uint32 token, const ExplainRun *r, const NodeWaits &outside);
// The leader takes its workers' waits into its run and outside table.
void explain_slot_take(ExplainRun *r, NodeWaits *outside);

}  // namespace psw
#pragma GCC visibility pop
