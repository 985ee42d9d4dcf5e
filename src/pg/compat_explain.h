// EXPLAIN's extension points, the part of the compat layer that only
// PostgreSQL 18 and later have: RegisterExtensionExplainOption(), the
// options' validation hook and the per-node and per-plan printing hooks.
// 19 added a GUC check handler to RegisterExtensionExplainOption(). Before
// 18 an extension cannot add an EXPLAIN option: compat_explain_install()
// does nothing and returns false. Feature code (src/pg/explain/) calls these
// helpers and never tests PG_VERSION_NUM itself.
#pragma once

#include "compat.h"

extern "C" {
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "commands/explain.h"
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

}  // namespace psw
