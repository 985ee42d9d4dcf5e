// Arming: from the option's parsing to the printed plan, this process's
// waits are timed (internal.h); the setting that tells parallel workers;
// the ends that disarm (the per-plan hook, the transaction's end, the
// abort of the subtransaction that armed).
#include "internal.h"

namespace psw {

ExplainState *armed_es = nullptr;
uint32 armed_token = 0;
NodeWaits outside_waits;
ExplainRun *run = nullptr;
int worker_token = 0;
static SubTransactionId armed_subxact = InvalidSubTransactionId;
static bool callbacks_registered = false;

static constexpr const char *kTokenSetting = "pg_stat_waits.explain_token";

static void set_token_setting(uint32 token) {
    char value[16];
    snprintf(value, sizeof(value), "%u", token);
    // LOCAL: the transaction's end takes it back whatever happens; the
    // leader's workers are handed the value with every other setting.
    (void)set_config_option(kTokenSetting, value, PGC_SUSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
}

void disarm_explain() {
    timing_explain_disarm();
    if (armed_token != 0) explain_slot_close();
    armed_token = 0;
    armed_es = nullptr;
    armed_subxact = InvalidSubTransactionId;
}

// Every end of a transaction disarms (the setting goes back by itself).
static void xact_callback(XactEvent event, void *) {
    if (armed_es != nullptr && event != XACT_EVENT_PRE_COMMIT && event != XACT_EVENT_PARALLEL_PRE_COMMIT &&
        event != XACT_EVENT_PRE_PREPARE)
        disarm_explain();
}

// An error inside the EXPLAIN aborts the subtransaction it armed in (a
// PL/pgSQL block's); one inside a function its query calls does not.
static void subxact_callback(SubXactEvent event, SubTransactionId my_subid, SubTransactionId, void *) {
    if (event == SUBXACT_EVENT_ABORT_SUB && armed_es != nullptr && my_subid == armed_subxact) disarm_explain();
}

static void arm(ExplainState *es) {
    // Armed for this EXPLAIN already (the option, then its query), or an
    // EXPLAIN run inside the armed one's query, which is not timed.
    if (armed_es != nullptr || IsParallelWorker()) return;
    if (!callbacks_registered) {
        callbacks_registered = true;
        RegisterXactCallback(xact_callback, nullptr);
        RegisterSubXactCallback(subxact_callback, nullptr);
    }
    ensure_explain_executor_hooks();
    drop_run();
    outside_waits.clear();
    armed_es = es;
    armed_subxact = GetCurrentSubTransactionId();
    armed_token = explain_slot_open();
    if (armed_token != 0) set_token_setting(armed_token);
    timing_explain_arm(&outside_waits);
}

void explain_requested(ExplainState *es) { arm(es); }
void explain_query_starts(ExplainState *es) { arm(es); }

// The per-plan hook has printed: the rest (ExecutorEnd, the commit) is
// not shown.
void explain_printed() {
    if (armed_token != 0) set_token_setting(0);
    disarm_explain();
}

// ---- the workers' setting ------------------------------------------------------------

static int token_setting = 0;

// A parallel worker restores its leader's settings before it starts its
// executor: a token tells it to time its nodes.
static void assign_token(int newval, void *) {
    if (!IsParallelWorker()) return;
    worker_token = newval;
    if (newval != 0) ensure_explain_executor_hooks();
}

void define_explain_token_setting() {
    DefineCustomIntVariable(kTokenSetting,
                            "Set by EXPLAIN (ANALYZE, WAITS) for its parallel workers; not meant to be set by hand.",
                            nullptr, &token_setting, 0, 0, INT_MAX, PGC_SUSET,
                            GUC_NO_SHOW_ALL | GUC_NO_RESET_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE, nullptr,
                            assign_token, nullptr);
}

}  // namespace psw
