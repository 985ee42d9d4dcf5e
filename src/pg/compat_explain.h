// EXPLAIN's extension points, the part of the compat layer that only
// PostgreSQL 18 and later have: RegisterExtensionExplainOption(), the
// options' validation hook and the per-node and per-plan printing hooks.
// 19 added a GUC check handler to RegisterExtensionExplainOption(). Before
// 18 an extension cannot add an EXPLAIN option: compat_explain_install()
// does nothing and returns false. The node walk the option needs builds on
// every major (16 typed planstate_tree_walker()'s walker). Feature code
// (src/pg/explain/) calls these helpers and never tests PG_VERSION_NUM.
#pragma once

#include "compat.h"

extern "C" {
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "commands/explain.h"
#include "nodes/nodeFuncs.h"
}

namespace psw {

// What an EXPLAIN option of ours is told. Each is called only for an
// EXPLAIN that gave the option as on.
struct ExplainOptionCallbacks {
    // Every option is parsed (es->analyze is known). ANALYZE is checked
    // before this: the option is refused without it, as TIMING is.
    void (*requested)(ExplainState *es);
    // One query of that EXPLAIN is about to be planned and run (a statement
    // that rules rewrite into several has several).
    void (*query_starts)(ExplainState *es);
    // A plan node's own lines are printed (its children's come next).
    void (*per_node)(PlanState *planstate, ExplainState *es);
    // The plan is printed, before ExecutorEnd and the execution time.
    void (*per_plan)(PlannedStmt *plannedstmt, ExplainState *es);
};

// Whether this server lets an extension add EXPLAIN options.
constexpr bool compat_has_explain_options() { return PG_VERSION_NUM >= 180000; }

// Registers the boolean EXPLAIN option `name` (at preload). False, and
// nothing registered, before 18.
bool compat_explain_install(const char *name, const ExplainOptionCallbacks *callbacks);

// planstate_tree_walker() with a typed walker: 15 declares the walker as
// an unprototyped C function (bool (*)()), 16 and later cast it for us.
using PlanStateWalker = bool (*)(PlanState *planstate, void *context);
inline bool compat_planstate_children(PlanState *planstate, PlanStateWalker walker, void *context) {
#if PG_VERSION_NUM >= 160000
    return planstate_tree_walker(planstate, walker, context);
#else
    // Through void (*)(void), the type GCC lets any function pointer pass.
    return planstate_tree_walker(planstate, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(walker)),
                                 context);
#endif
}

}  // namespace psw
