// EXPLAIN's extension points on 18 and later (compat_explain.h).
#include "compat_explain.h"

extern "C" {
#include "commands/defrem.h"
#include "utils/formatting.h"
}

namespace psw {

#if PG_VERSION_NUM >= 180000

static const ExplainOptionCallbacks *callbacks = nullptr;
static const char *option_name = nullptr;
static int extension_id = -1;
static explain_validate_options_hook_type prev_validate = nullptr;
static ExplainOneQuery_hook_type prev_one_query = nullptr;
static explain_per_node_hook_type prev_per_node = nullptr;
static explain_per_plan_hook_type prev_per_plan = nullptr;

// The option's value lives in the ExplainState (one bool, in its memory
// context); absent or off leaves no state.
static bool requested(ExplainState *es) {
    const bool *on = static_cast<const bool *>(GetExplainExtensionState(es, extension_id));
    return on != nullptr && *on;
}

static void option_handler(ExplainState *es, DefElem *opt, ParseState *) {
    bool *on = static_cast<bool *>(GetExplainExtensionState(es, extension_id));
    if (on == nullptr) {
        on = static_cast<bool *>(palloc0(sizeof(bool)));
        SetExplainExtensionState(es, extension_id, on);
    }
    *on = defGetBoolean(opt);
}

static void validate(ExplainState *es, List *options, ParseState *pstate) {
    if (prev_validate) prev_validate(es, options, pstate);
    if (!requested(es)) return;
    if (!es->analyze)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("EXPLAIN option %s requires ANALYZE", asc_toupper(option_name, strlen(option_name)))));
    callbacks->requested(es);
}

static void one_query(Query *query, int cursor_options, IntoClause *into, ExplainState *es, const char *query_string,
                      ParamListInfo params, QueryEnvironment *query_env) {
    if (requested(es)) callbacks->query_starts(es);
    if (prev_one_query)
        prev_one_query(query, cursor_options, into, es, query_string, params, query_env);
    else
        standard_ExplainOneQuery(query, cursor_options, into, es, query_string, params, query_env);
}

static void per_node(PlanState *planstate, List *ancestors, const char *relationship, const char *plan_name,
                     ExplainState *es) {
    if (prev_per_node) prev_per_node(planstate, ancestors, relationship, plan_name, es);
    if (requested(es)) callbacks->per_node(planstate, es);
}

static void per_plan(PlannedStmt *plannedstmt, IntoClause *into, ExplainState *es, const char *query_string,
                     ParamListInfo params, QueryEnvironment *query_env) {
    if (prev_per_plan) prev_per_plan(plannedstmt, into, es, query_string, params, query_env);
    if (requested(es)) callbacks->per_plan(plannedstmt, es);
}

bool compat_explain_install(const char *name, const ExplainOptionCallbacks *cb) {
    callbacks = cb;
    option_name = name;
    extension_id = GetExplainExtensionId("pg_stat_waits");
#if PG_VERSION_NUM >= 190000
    RegisterExtensionExplainOption(name, option_handler, GUCCheckBooleanExplainOption);
#else
    RegisterExtensionExplainOption(name, option_handler);
#endif
    prev_validate = explain_validate_options_hook;
    explain_validate_options_hook = validate;
    prev_one_query = ExplainOneQuery_hook;
    ExplainOneQuery_hook = one_query;
    prev_per_node = explain_per_node_hook;
    explain_per_node_hook = per_node;
    prev_per_plan = explain_per_plan_hook;
    explain_per_plan_hook = per_plan;
    return true;
}

#else

bool compat_explain_install(const char *, const ExplainOptionCallbacks *) { return false; }

#endif

}  // namespace psw
