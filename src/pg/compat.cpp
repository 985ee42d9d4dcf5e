// The out-of-line half of the compat layer (see compat.h for what differs
// between PostgreSQL 15, 16, 17, 18 and 19).
#include "compat.h"

extern "C" {
#include "storage/lmgr.h"
}

namespace psw {

// ---- query ids -----------------------------------------------------------------------

uint64 compat_utility_query_id(const PlannedStmt *pstmt, const char *query_string) {
#if PG_VERSION_NUM >= 160000
    // Parse analysis jumbles a utility statement as a Query whose only
    // non-default fields are commandType and utilityStmt; jumble the same.
    (void)query_string;
    if (pstmt == nullptr || pstmt->utilityStmt == nullptr) return 0;
    Query *q = makeNode(Query);
    q->commandType = CMD_UTILITY;
    q->utilityStmt = pstmt->utilityStmt;
    (void)JumbleQuery(q);
    uint64 id = compat_queryid(q->queryId);
    pfree(q);
    return id;
#else
    // queryjumble.c of 15: a hash of the statement's cleaned text, 2 if 0.
    if (pstmt == nullptr || query_string == nullptr) return 0;
    int location = pstmt->stmt_location;
    int len = pstmt->stmt_len;
    const char *sql = CleanQuerytext(query_string, &location, &len);
    uint64 id = DatumGetUInt64(hash_any_extended(reinterpret_cast<const unsigned char *>(sql), len, 0));
    return id != 0 ? id : UINT64CONST(2);
#endif
}

bool compat_untracked_utility_id(const Node *stmt, uint64 *id) {
    if (stmt == nullptr) return false;
    if (IsA(stmt, ExecuteStmt)) {
        // The prepared statement as parse analysis left it (with its id);
        // no lookup error here: EXECUTE of an unknown name fails on its own.
        *id = 0;
        const PreparedStatement *ps =
            FetchPreparedStatement(reinterpret_cast<const ExecuteStmt *>(stmt)->name, false);
        if (ps != nullptr && ps->plansource != nullptr && ps->plansource->query_list != NIL)
            *id = compat_queryid(linitial_node(Query, ps->plansource->query_list)->queryId);
        return true;
    }
    bool untracked = IsA(stmt, PrepareStmt);
#if PG_VERSION_NUM < 170000
    untracked = untracked || IsA(stmt, DeallocateStmt);
#endif
    if (untracked) *id = 0;
    return untracked;
}

// ---- shared memory ---------------------------------------------------------------------

PgBackendStatus *compat_backend_status_array(int slots) {
#if PG_VERSION_NUM >= 190000
    (void)slots;
    if (MyBEEntry == nullptr || MyProcNumber == INVALID_PROC_NUMBER) return nullptr;
    return MyBEEntry - MyProcNumber;
#else
    // A lookup that fails allocates: never inside a critical section.
    if (CritSectionCount > 0) return nullptr;
    bool found = false;
    void *ptr = ShmemInitStruct("Backend Status Array", mul_size(sizeof(PgBackendStatus), slots), &found);
    return found ? static_cast<PgBackendStatus *>(ptr) : nullptr;
#endif
}

// ---- wait events -------------------------------------------------------------------------

namespace {

constexpr uint8 kClassOf(uint32 info) { return static_cast<uint8>(info >> 24); }

// Extension LWLock tranches (LWLockNewTrancheId, RequestNamedLWLockTranche:
// pg_stat_statements, pg_stat_waits itself...) get this many rows of their
// own after the built-in ones.
constexpr uint16 kUserTranches = 64;

// Probing stops here: no class has come near it.
constexpr uint16 kProbeLimit = 1024;

#if PG_VERSION_NUM >= 170000
// Run-time events share one id counter across both custom classes, capped
// by WAIT_EVENT_CUSTOM_HASH_MAX_SIZE (128, private to wait_event.c); ids
// start at 1, 0 is the Extension class's built-in "Extension".
constexpr uint16 kCustomIds = 128;

// This process's copy of the run-time event names, by class and id. Names
// and ids never change while the server runs, and entries are never
// removed, so a copy only goes stale by missing newer events: it is
// refreshed on a miss, at most once per statement.
struct CustomNames {
    char name[2][kCustomIds][NAMEDATALEN];
    TimestampTz refreshed_for;  // statement start of the last refresh
    bool any_refresh;
};
CustomNames custom_names;

int custom_slot(uint8 cls) { return cls == kClassExtension ? 0 : (cls == kClassInjectionPoint ? 1 : -1); }

void refresh_custom_names() {
    TimestampTz stmt = GetCurrentStatementStartTimestamp();
    if (custom_names.any_refresh && custom_names.refreshed_for == stmt) return;
    custom_names.any_refresh = true;
    custom_names.refreshed_for = stmt;
    const uint32 classes[2] = {PG_WAIT_EXTENSION, PG_WAIT_INJECTIONPOINT};
    for (int c = 0; c < 2; c++) {
        int n = 0;
        char **names = GetWaitEventCustomNames(classes[c], &n);
        for (int i = 0; i < n; i++) {
            // A name from the list exists: *New only looks it up (it
            // allocates just for a name not yet there).
            uint32 info = c == 0 ? WaitEventExtensionNew(names[i]) : WaitEventInjectionPointNew(names[i]);
            uint16 id = static_cast<uint16>(info & 0xFFFF);
            if ((info & 0xFF000000U) == classes[c] && id < kCustomIds)
                strlcpy(custom_names.name[c][id], names[i], NAMEDATALEN);
        }
    }
}

const char *custom_name(uint32 info) {
    uint8 cls = kClassOf(info);
    uint32 id = info & 0xFFFFFF;
    if (cls == kClassExtension && id == 0) return "Extension";
    int c = custom_slot(cls);
    if (c < 0 || id >= kCustomIds) return nullptr;
    if (custom_names.name[c][id][0] == '\0' && MyProc != nullptr && IsUnderPostmaster) refresh_custom_names();
    return custom_names.name[c][id][0] != '\0' ? custom_names.name[c][id] : nullptr;
}
#endif

#if PG_VERSION_NUM >= 190000
// 19 keeps extension tranche names in shared memory, so every process
// names every registered tranche; GetLWLockIdentifier() raises an ERROR for
// an id not (yet) registered, and the count is private to lwlock.c. Ids are
// handed out densely and never taken back: below known_user_tranches every
// id has a name. A miss is remembered for the rest of the statement.
int known_user_tranches = 0;
int missing_user_tranche = -1;  // first id found unregistered, for missing_since
TimestampTz missing_since;

// GetLWLockIdentifier() for an extension tranche id, or nullptr when the
// server has none: the ERROR is caught (never inside a critical section,
// where it would be a PANIC) and the holdoff counts errfinish() zeroes are
// put back.
const char *user_tranche_name(uint16 id) {
    int idx = id - LWTRANCHE_FIRST_USER_DEFINED;
    if (idx >= known_user_tranches) {
        TimestampTz stmt = GetCurrentStatementStartTimestamp();
        if (missing_user_tranche >= 0 && idx >= missing_user_tranche && missing_since == stmt) return nullptr;
        if (CritSectionCount > 0) return nullptr;
        uint32 holdoff = InterruptHoldoffCount;
        uint32 cancel_holdoff = QueryCancelHoldoffCount;
        MemoryContext cxt = CurrentMemoryContext;
        volatile bool registered = false;
        PG_TRY();
        {
            (void)GetLWLockIdentifier(PG_WAIT_LWLOCK, id);
            registered = true;
        }
        PG_CATCH();
        {
            MemoryContextSwitchTo(cxt);
            FlushErrorState();
            InterruptHoldoffCount = holdoff;
            QueryCancelHoldoffCount = cancel_holdoff;
        }
        PG_END_TRY();
        if (!registered) {
            missing_user_tranche = idx;
            missing_since = stmt;
            return nullptr;
        }
        known_user_tranches = idx + 1;
    }
    return GetLWLockIdentifier(PG_WAIT_LWLOCK, id);
}
#endif

}  // namespace

const char *compat_wait_event_type(uint32 info) {
    if (info == 0) return nullptr;
    const char *t = pgstat_get_wait_event_type(info);
    return t != nullptr ? t : "???";
}

const char *compat_wait_event_name(uint32 info, bool *named) {
    *named = false;
    if (info == 0) return "CPU";
    uint8 cls = kClassOf(info);
    uint32 id = info & 0xFFFFFF;
    if (id > 0xFFFF) return "other";  // PostgreSQL's ids are 16 bits
    const char *name = nullptr;
    switch (cls) {
        case kClassLWLock:
            // 17+: built-in ids no lock uses have a NULL name.
#if PG_VERSION_NUM >= 190000
            name = id >= LWTRANCHE_FIRST_USER_DEFINED ? user_tranche_name(static_cast<uint16>(id))
                                                      : GetLWLockIdentifier(PG_WAIT_LWLOCK, static_cast<uint16>(id));
#else
            name = GetLWLockIdentifier(PG_WAIT_LWLOCK, static_cast<uint16>(id));
#endif
            if (name == nullptr) return "other";
            // A tranche not registered in this process: PostgreSQL's
            // placeholder, as pg_stat_activity shows it here.
            if (id >= LWTRANCHE_FIRST_USER_DEFINED && strcmp(name, "extension") == 0) return name;
            *named = true;
            return name;
        case kClassLock:
            name = GetLockNameFromTagType(static_cast<uint16>(id));
            if (name == nullptr || strcmp(name, "???") == 0) return "other";
            *named = true;
            return name;
        case kClassExtension:
        case kClassInjectionPoint:
#if PG_VERSION_NUM >= 170000
            // pgstat_get_wait_event() raises an ERROR for an id the shared
            // hash lacks (a persisted id after a restart, a probe).
            name = custom_name(info);
            if (name == nullptr) return "other";
            *named = true;
            return name;
#else
            if (cls == kClassExtension && id == 0) {
                *named = true;
                return "Extension";
            }
            return "other";
#endif
        case kClassBufferPin:
#if PG_VERSION_NUM < 170000
            // 15/16 name the whole class "BufferPin", whatever the id.
            if (id != 0) return "other";
            *named = true;
            return "BufferPin";
#endif
        case kClassActivity:
        case kClassClient:
        case kClassIPC:
        case kClassTimeout:
        case kClassIO:
            // Generated name switches: "unknown wait event" past the end.
            name = pgstat_get_wait_event(info);
            if (name == nullptr || strcmp(name, "unknown wait event") == 0) return "other";
            *named = true;
            return name;
        default:
            return "other";
    }
}

int compat_wait_class_sizes(WaitClassSize *out, int max) {
    int n = 0;
    auto put = [&](uint8 cls, uint16 events) {
        // The server's name of the class (19 calls 0x04 "Buffer"); "???"
        // for a class it does not have keeps the catalog's.
        const char *type = pgstat_get_wait_event_type(wait_info_make(cls, 0));
        if (type != nullptr && strcmp(type, "???") == 0) type = nullptr;
        if (n < max) out[n++] = WaitClassSize{cls, events, type};
    };
    // Built-in LWLock ids end at a compile-time constant that minor
    // releases keep (ABI); user tranches follow.
    put(kClassLWLock, static_cast<uint16>(LWTRANCHE_FIRST_USER_DEFINED + kUserTranches));
    const uint8 probed[] = {kClassLock, kClassBufferPin, kClassActivity, kClassClient,
                            kClassIPC,  kClassTimeout,   kClassIO};
    for (uint8 cls : probed) {
        // Events are numbered densely from 0; the first id without a name
        // (or repeating id 0's name: a class named as a whole) ends it.
        uint16 events = 0;
        const char *first = nullptr;
        while (events < kProbeLimit) {
            bool named = false;
            const char *name = compat_wait_event_name(wait_info_make(cls, events), &named);
            if (!named || (first != nullptr && strcmp(name, first) == 0)) break;
            if (first == nullptr) first = name;
            events++;
        }
        put(cls, events);
    }
#if PG_VERSION_NUM >= 170000
    put(kClassExtension, kCustomIds);
    put(kClassInjectionPoint, kCustomIds);
#else
    put(kClassExtension, 1);
    put(kClassInjectionPoint, 0);
#endif
    return n;
}

uint32 compat_register_wait_event(const char *name) {
#if PG_VERSION_NUM >= 170000
    // Only a full table (128 run-time events) fails; fall back to the
    // class's own event rather than failing the caller.
    volatile uint32 info = PG_WAIT_EXTENSION;
    MemoryContext cxt = CurrentMemoryContext;
    PG_TRY();
    {
        info = WaitEventExtensionNew(name);
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(cxt);
        EmitErrorReport();
        FlushErrorState();
        LWLockReleaseAll();
    }
    PG_END_TRY();
    return info;
#else
    (void)name;
    return PG_WAIT_EXTENSION;
#endif
}

}  // namespace psw
