// pg_wait_sampling.* settings, defined by pg_stat_waits where pg_wait_sampling
// is not loaded, so that a postgresql.conf written for pg_wait_sampling keeps
// working after the switch: its values are validated as pg_wait_sampling
// validates them, SHOW answers, and the pg_wait_sampling extension (the
// drop-in, extension/pg_wait_sampling/) and pg_wait_sampling_compat read
// the two that map onto pg_stat_waits' data (profile_queries, sample_cpu; a
// superuser may SET them, as with pg_wait_sampling); profile_pid keeps the
// drop-in's profile per process (the sampler counts each sample into it
// too, pg_wait_sampling_profile.cpp). history_size is accepted and does
// nothing here. The two periods always show pg_stat_waits.sample_period:
// tools multiply sample counts by pg_wait_sampling.profile_period to get
// time (pg_profile does), so it must be the period the samples were taken
// at; another value is refused rather than shown and ignored.
#include "pg_wait_sampling_gucs.h"

#include <climits>
#include <cstdio>
#include <cstring>

#include "../gucs.h"
#include "../pg.h"

namespace psw {

static int wsg_history_size = 5000;
static int wsg_history_period = 10;
static int wsg_profile_period = 10;
static bool wsg_profile_pid = false;
static int wsg_profile_queries = 1;
static bool wsg_sample_cpu = true;

// pg_wait_sampling's values, including its spellings of on/off (1.1.4 had a
// boolean; later releases an enum where on means top).
static const struct config_enum_entry profile_queries_options[] = {
    {"none", 0, false}, {"top", 1, false}, {"all", 2, false},  {"off", 0, true}, {"no", 0, true},
    {"false", 0, true}, {"0", 0, true},    {"on", 1, true},    {"yes", 1, true}, {"true", 1, true},
    {"1", 1, true},     {nullptr, 0, false},
};

// history_period and profile_period: pg_stat_waits.sample_period, whatever
// was set. The default (a reset, or no line in postgresql.conf) is always
// accepted: it stands for "follow sample_period".
static bool check_period(int *newval, void **extra, GucSource source) {
    if (source == PGC_S_DEFAULT || *newval == guc_sample_period_ms) return true;
    GUC_check_errdetail("pg_stat_waits samples every pg_stat_waits.sample_period (now %d ms); history and profile "
                        "have no period of their own.",
                        guc_sample_period_ms);
    GUC_check_errhint("Set pg_stat_waits.sample_period instead, and remove this setting.");
    return false;
}

static const char *show_period() {
    static char buf[32];
    snprintf(buf, sizeof(buf), "%d", guc_sample_period_ms);
    return buf;
}

// True if `list` (shared_preload_libraries) names the library `lib`, as a
// bare name, a path, or with a .so suffix, quoted or not.
static bool list_names_library(const char *list, const char *lib) {
    if (list == nullptr) return false;
    const size_t lib_len = strlen(lib);
    const char *p = list;
    while (*p != '\0') {
        const char *end = strchr(p, ',');
        if (end == nullptr) end = p + strlen(p);
        const char *b = p;
        const char *e = end;
        while (b < e && (*b == ' ' || *b == '\t' || *b == '"')) b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '"')) e--;
        for (const char *s = b; s < e; s++)
            if (*s == '/') b = s + 1;
        if (e - b > 3 && strncmp(e - 3, ".so", 3) == 0) e -= 3;
        if (static_cast<size_t>(e - b) == lib_len && strncmp(b, lib, lib_len) == 0) return true;
        p = *end == ',' ? end + 1 : end;
    }
    return false;
}

void define_pg_wait_sampling_gucs() {
    if (list_names_library(shared_preload_libraries_string, "pg_wait_sampling")) return;
    DefineCustomIntVariable("pg_wait_sampling.history_size",
                            "Accepted for pg_wait_sampling compatibility; no effect: the history holds "
                            "pg_stat_waits.history_size samples.",
                            nullptr, &wsg_history_size, 5000, 100, INT_MAX, PGC_SIGHUP, 0, nullptr, nullptr,
                            nullptr);
    DefineCustomIntVariable("pg_wait_sampling.history_period",
                            "Always pg_stat_waits.sample_period: history and profile are sampled every "
                            "pg_stat_waits.sample_period.",
                            nullptr, &wsg_history_period, 10, 1, INT_MAX, PGC_SUSET, 0, check_period,
                            nullptr, show_period);
    DefineCustomIntVariable("pg_wait_sampling.profile_period",
                            "Always pg_stat_waits.sample_period: history and profile are sampled every "
                            "pg_stat_waits.sample_period.",
                            nullptr, &wsg_profile_period, 10, 1, INT_MAX, PGC_SUSET, 0, check_period,
                            nullptr, show_period);
    // Off by default, unlike pg_wait_sampling: with it on, the sampler
    // counts every sample a second time, into the per-process table.
    DefineCustomBoolVariable("pg_wait_sampling.profile_pid",
                             "Whether pg_wait_sampling_profile is kept per process (pid), in a table of "
                             "pg_stat_waits.profile_max keys.",
                             nullptr, &wsg_profile_pid, false, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomEnumVariable("pg_wait_sampling.profile_queries",
                             "Which queryid the pg_wait_sampling_* views show: none (0), top (the top-level "
                             "statement's) or all (the running statement's, nested ones with "
                             "pg_stat_waits.track = 'all').",
                             nullptr, &wsg_profile_queries, 1, profile_queries_options, PGC_SUSET, 0, nullptr,
                             nullptr, nullptr);
    DefineCustomBoolVariable("pg_wait_sampling.sample_cpu",
                             "Whether the pg_wait_sampling_* views show processes that are not waiting "
                             "(event NULL).",
                             nullptr, &wsg_sample_cpu, true, PGC_SUSET, 0, nullptr, nullptr, nullptr);
}

// Read by name, not from the variables above: where pg_wait_sampling is
// preloaded it defines the settings (1.1.4: profile_queries a boolean).
bool wait_sampling_sample_cpu() {
    const char *v = GetConfigOption("pg_wait_sampling.sample_cpu", true, false);
    bool b = true;
    return v == nullptr || !parse_bool(v, &b) || b;
}

bool wait_sampling_profile_pid() { return wsg_profile_pid; }

WaitSamplingQueries wait_sampling_profile_queries() {
    const char *v = GetConfigOption("pg_wait_sampling.profile_queries", true, false);
    if (v == nullptr) return kWsQueriesTop;
    if (pg_strcasecmp(v, "all") == 0) return kWsQueriesAll;
    if (pg_strcasecmp(v, "none") == 0) return kWsQueriesNone;
    bool b = true;
    return parse_bool(v, &b) && !b ? kWsQueriesNone : kWsQueriesTop;
}

}  // namespace psw
