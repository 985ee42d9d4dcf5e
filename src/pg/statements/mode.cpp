// The statements feature's setup and mode: pg_stat_waits.track, the hooks
// installed at preload and those installed when first needed, the
// backend's slot, and the switch between server and tracker mode
// (internal.h).
//
// The settings are SUSET and change at any time (SET, a function's SET
// clause, a reload); until the next point where no statement phase runs a
// backend stays in its mode. The hooks and callbacks only the tracker needs
// (ExecutorStart/Finish, and ExecutorEnd and the subtransaction callback,
// which timing needs too) are installed in a backend the first time it
// enters tracker mode or timing is turned on, and the transaction callback
// when a setting first asks for the tracker or timing, so a backend that
// never times pays nothing for them; once installed they stay (another
// library may have chained behind them) and pass straight through when
// not needed.
#include "internal.h"

namespace psw {

int guc_track = kTrackTop;

post_parse_analyze_hook_type prev_post_parse_analyze = nullptr;
planner_hook_type next_planner = standard_planner;
ExecutorStart_hook_type next_executor_start = standard_ExecutorStart;
ExecutorRun_hook_type next_executor_run = standard_ExecutorRun;
ExecutorFinish_hook_type next_executor_finish = standard_ExecutorFinish;
ExecutorEnd_hook_type next_executor_end = standard_ExecutorEnd;
ProcessUtility_hook_type next_process_utility = standard_ProcessUtility;

// The function ours passes on to: `hook`, the one installed before ours, if
// any, else PostgreSQL's `standard`.
template <typename F>
static inline F chain_to(F hook, F standard) {
    return hook != nullptr ? hook : standard;
}

BackendSlot *my_slot = nullptr;
bool server_execute_published = false;

__attribute__((noinline)) BackendSlot *find_slot() {
    my_slot = own_slot();
    return my_slot;
}

void publish_server(uint8_t state, uint64 queryid, uint64 top_queryid, TimestampTz query_start) {
    publish_slot(kSourceServer, state, queryid, top_queryid, query_start);
}

// ---- exact timing's timer ----------------------------------------------------------

TimingFlags timing_flags = {false, false, false, false};

static void no_start(uint64_t) {}
static void no_end() {}
static bool no_call(uint64_t) { return false; }
static uint64_t no_statement() { return 0; }
static const bool timing_never = false;
static const StatementTimer no_timer = {&timing_never, no_start, no_end, no_end, no_start,
                                        no_start,      no_call,  no_statement, no_call, no_end};
// A copy, not a pointer: each call through it is one load and a jump.
StatementTimer timer = no_timer;

void statements_register_timer(const StatementTimer *t) { timer = t != nullptr ? *t : no_timer; }

// ---- mode ----------------------------------------------------------------------

uint8 mode = kModeUndecided;
volatile PgBackendStatus *my_be = nullptr;
bool server_fast = false;
bool server_plain = false;
bool server_timed = false;
bool server_timed_fast = false;
bool server_no_tracker = false;
uint64 timed_pg_id = 0;

// The flags from the mode and the given settings (an assign hook's new
// value, which PostgreSQL stores only after the hook).
static void derive_flags(bool timing, bool track_all) {
    bool server_only =
        mode == kModeServer && !track_all && prev_post_parse_analyze == nullptr && !timing_flags.log_pending;
    server_fast = server_only && !timing;
    server_timed_fast = server_only && timing;
    server_plain = mode == kModeServer && !timing;
    server_timed = mode == kModeServer && timing;
    server_no_tracker = mode == kModeServer && !track_all;
}

void update_server_fast() { derive_flags(*timer.enabled, guc_track == kTrackAll); }

static bool tracker_hooks_installed = false;
static bool xact_callback_registered = false;

void ensure_xact_callback() {
    if (xact_callback_registered) return;
    xact_callback_registered = true;
    RegisterXactCallback(xact_callback, nullptr);
}

// ExecutorEnd and the subtransaction callback: the tracker's, and timed
// server mode's (calls, and a statement's end inside a block).
static bool end_hooks_installed = false;
static void ensure_end_hooks() {
    if (end_hooks_installed) return;
    end_hooks_installed = true;
    next_executor_end = chain_to(ExecutorEnd_hook, standard_ExecutorEnd);
    ExecutorEnd_hook = executor_end;
    RegisterSubXactCallback(subxact_callback, nullptr);
}

StatementTracker<HookEnv> tracker;

unsigned long long current_queryid() {
    if (mode == kModeTracker) return tracker.queryid();
    return MyBEEntry != nullptr ? compat_queryid(MyBEEntry->st_query_id) : 0;
}

__attribute__((noinline)) void enter_tracker_mode() {
    if (!tracker_hooks_installed) {
        tracker_hooks_installed = true;
        next_executor_start = chain_to(ExecutorStart_hook, standard_ExecutorStart);
        ExecutorStart_hook = executor_start;
        next_executor_finish = chain_to(ExecutorFinish_hook, standard_ExecutorFinish);
        ExecutorFinish_hook = executor_finish;
        ensure_end_hooks();
        ensure_xact_callback();
    }
    tracker.reset();
    timed_pg_id = 0;
    mode = kModeTracker;
    update_server_fast();
}

__attribute__((noinline)) void enter_server_mode() {
    if (mode == kModeTracker) tracker.env.timing_end();
    tracker.reset();
    my_be = MyBEEntry;
    mode = kModeServer;
    update_server_fast();
    publish_server(kStmtUnknown, 0, 0, 0);
    server_execute_published = false;
}

void statements_timer_switched(bool on) {
    derive_flags(on, guc_track == kTrackAll);
    if (on) {
        ensure_end_hooks();
        ensure_xact_callback();
    }
}

static void assign_track(int newval, void *) {
    derive_flags(*timer.enabled, newval == kTrackAll);
    if (newval == kTrackAll) ensure_xact_callback();
}

static const struct config_enum_entry track_options[] = {
    {"top", kTrackTop, false},
    {"all", kTrackAll, false},
    {nullptr, 0, false},
};

void define_statement_gucs() {
    DefineCustomEnumVariable("pg_stat_waits.track",
                             "Which statement's queryid is attributed: top-level only, or nested statements too.",
                             nullptr, &guc_track, kTrackTop, track_options, PGC_SUSET, 0, nullptr, assign_track,
                             nullptr);
}

// At preload: what every mode needs. The tracker's own hooks come with
// enter_tracker_mode().
void install_statement_hooks() {
    prev_post_parse_analyze = post_parse_analyze_hook;
    post_parse_analyze_hook = post_parse_analyze;
    next_planner = chain_to(planner_hook, standard_planner);
    planner_hook = planner;
    next_executor_run = chain_to(ExecutorRun_hook, standard_ExecutorRun);
    ExecutorRun_hook = executor_run;
    next_process_utility = chain_to(ProcessUtility_hook, standard_ProcessUtility);
    ProcessUtility_hook = process_utility;
}

}  // namespace psw
