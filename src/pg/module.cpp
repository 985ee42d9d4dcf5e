// Library entry point: GUCs, shared memory, hooks. Runs in the postmaster at
// preload time; every child process inherits what it sets up.
#include "features.h"
#include "gucs.h"
#include "shared_state.h"

extern "C" {
PG_MODULE_MAGIC;
PSW_EXPORT void _PG_init(void);
}

namespace psw {

SharedState *shared = nullptr;
PgBackendStatus *backend_status_array = nullptr;
int backend_status_slots = 0;

static shmem_request_hook_type prev_shmem_request_hook = nullptr;
static shmem_startup_hook_type prev_shmem_startup_hook = nullptr;
static bool preloaded = false;

void require_preloaded() {
    if (!preloaded || shared == nullptr)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("pg_stat_waits must be loaded via shared_preload_libraries"),
                        errhint("Add pg_stat_waits to shared_preload_libraries in postgresql.conf and restart "
                                "the server.")));
}

const char *slot_state_name(uint8_t state) {
    switch (state) {
        case kStateActive: return "active";
        case kStateIdle: return "idle";
        case kStateIdleInXact: return "idle in transaction";
        default: return nullptr;
    }
}

// Every feature's shared-memory parts, in the registry's order.
template <typename F>
static void for_each_part(F &&f) {
    for (int i = 0; i < feature_count(); i++)
        for (const ShmemPart *part : feature_at(i).parts)
            if (part != nullptr) f(*part);
}

static Size total_shmem_size() {
    Size total = 0;
    for_each_part([&](const ShmemPart &part) { total = add_size(total, MAXALIGN(part.size())); });
    return total;
}

static void shmem_request() {
    if (prev_shmem_request_hook) prev_shmem_request_hook();
    RequestAddinShmemSpace(total_shmem_size());
    RequestNamedLWLockTranche("pg_stat_waits", 1);
}

// PostgreSQL's backend status array is not exported; find it so readers
// can show each process's backend type (compat_backend_status_array()).
bool attach_backend_status_array() {
    if (backend_status_array != nullptr) return true;
    int slots = compat_backend_status_slots();
    PgBackendStatus *array = compat_backend_status_array(slots);
    if (array == nullptr) return false;
    backend_status_slots = slots;
    backend_status_array = array;
    return true;
}

static void shmem_startup() {
    if (prev_shmem_startup_hook) prev_shmem_startup_hook();

    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    for_each_part([](const ShmemPart &part) {
        bool found = false;
        void *ptr = ShmemInitStruct(part.name, part.size(), &found);
        part.init(ptr, found);
    });
    // 15-18: children inherit the postmaster's lookup; 19: each looks itself.
    if (compat_shmem_lookup_in_postmaster() && !attach_backend_status_array())
        elog(ERROR, "pg_stat_waits: PostgreSQL's backend status array is missing");
    shared->shmem_bytes = total_shmem_size();
    LWLockRelease(AddinShmemInitLock);
}

// Core part: the global state and one slot per PGPROC.
static Size core_size() {
    // allProcCount is not known before shared memory exists: compute it as
    // InitProcGlobal does (backends + auxiliary processes + prepared xacts).
    Size slots = add_size(add_size(MaxBackends, NUM_AUXILIARY_PROCS), max_prepared_xacts);
    return add_size(offsetof(SharedState, slots), mul_size(slots, sizeof(BackendSlot)));
}

static void core_init(void *ptr, bool found) {
    shared = static_cast<SharedState *>(ptr);
    if (found) return;
    memset(ptr, 0, core_size());
    shared->lock = &(GetNamedLWLockTranche("pg_stat_waits"))->lock;
    shared->num_slots = static_cast<uint32>(MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts);
    shared->stats_reset = GetCurrentTimestamp();
    for (uint32 i = 0; i < shared->num_slots; i++) {
        shared->slots[i].pub.init();
        shared->slots[i].blocked_by.init();
    }
}

const ShmemPart core_part = {"pg_stat_waits core", core_size, core_init};

// The dense wait index of exact timing, sized from this server's own wait
// event names (so a minor release that appends events is covered), in the
// postmaster before any child forks: every process shares the layout.
static void init_wait_catalog() {
    WaitClassSize sizes[16];
    int n = compat_wait_class_sizes(sizes, lengthof(sizes));
    if (!wait_catalog_init(sizes, n))
        ereport(LOG, (errmsg("pg_stat_waits: this server has more wait events than exact timing can keep apart"),
                      errdetail("Events past the first %d are counted in their class's \"other\" row.",
                                static_cast<int>(kWaitIndexLimit))));
}

}  // namespace psw

void _PG_init(void) {
    if (!process_shared_preload_libraries_in_progress) return;  // SQL functions raise the error
    psw::preloaded = true;
    const int n = psw::feature_count();
    // Each feature its own settings (the registry's order: features.cpp).
    for (int i = 0; i < n; i++)
        if (psw::feature_at(i).define_settings != nullptr) psw::feature_at(i).define_settings();
    MarkGUCPrefixReserved("pg_stat_waits");
    psw::init_wait_catalog();
    // Same query ids as pg_stat_statements and pg_stat_activity.query_id.
    EnableQueryId();
    psw::prev_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = psw::shmem_request;
    psw::prev_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = psw::shmem_startup;
    for (int i = 0; i < n; i++)
        if (psw::feature_at(i).install_hooks != nullptr) psw::feature_at(i).install_hooks();
    for (int i = 0; i < n; i++)
        if (psw::feature_at(i).start != nullptr) psw::feature_at(i).start();
}
