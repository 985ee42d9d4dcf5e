#include "citus.h"

#include "../../core/citus_gpid.h"

namespace psw {

bool citus_preloaded = false;

// Compares each entry of shared_preload_libraries by its base name up to
// the first dot, as PostgreSQL would look it up ("citus", "$libdir/citus",
// ".../citus.so").
void citus_detect() {
    if (shared_preload_libraries_string == nullptr) return;
    char *copy = pstrdup(shared_preload_libraries_string);
    List *names = NIL;
    if (SplitDirectoriesString(copy, ',', &names)) {
        ListCell *lc;
        foreach (lc, names) {
            const char *path = static_cast<const char *>(lfirst(lc));
            const char *base = strrchr(path, '/');
            base = base != nullptr ? base + 1 : path;
            const size_t len = strcspn(base, ".");
            if (len == 5 && strncmp(base, "citus", 5) == 0) citus_preloaded = true;
        }
    }
    list_free_deep(names);
    pfree(copy);
}

int64 citus_gpid_of_entry(const volatile PgBackendStatus *e, int32 pid) {
    // The name lives in a buffer of NAMEDATALEN bytes per entry, written
    // under the entry's changecount (pgstat_report_appname).
    char name[NAMEDATALEN];
    for (int attempt = 0; attempt < 100; attempt++) {
        int before, after;
        pgstat_begin_read_activity(e, before);
        const int32 owner = e->st_procpid;
        const char *appname = const_cast<const char *>(e->st_appname);
        if (appname != nullptr) memcpy(name, appname, NAMEDATALEN);
        pgstat_end_read_activity(e, after);
        if (!pgstat_read_activity_complete(before, after)) continue;
        if (owner != pid || appname == nullptr) return 0;
        return citus_gpid_from_appname(name, NAMEDATALEN);
    }
    return 0;
}

int64 citus_own_gpid() {
    if (!citus_preloaded || application_name == nullptr) return 0;
    return citus_gpid_from_appname(application_name, strlen(application_name));
}

}  // namespace psw
