// Display names of dense wait indexes, shared by the exact-timing views and
// pg_stat_waits_wait_events().
#include "wait_names.h"

#include "pg.h"
#include "../core/wait_catalog.h"

namespace psw {

// Display names of a dense wait index (DESIGN.md §2): PostgreSQL's own
// names, 'Unreported'/<call> ('CPU'/<call> for calls that never block), and
// '<class>'/'other' for ids PG 15 does not define (e.g. extension LWLock
// tranches).
void index_names(uint16 idx, const char **type, const char **name) {
    uint8_t cls;
    uint16_t ev;
    bool other;
    if (!wait_index_decode(idx, &cls, &ev, &other) || cls == 0xFF) {
        *type = "Other";
        *name = "other";
        return;
    }
    const WaitClassInfo *c = wait_class_by_id(cls);
    if (cls == kClassCPU) {
        *type = "CPU";
        *name = "CPU";
    } else if (other) {
        *type = c ? c->name : "Other";
        *name = "other";
    } else if (cls == kClassUnreported) {
        // A call that never blocks is CPU work in the kernel, not a wait.
        *type = call_never_blocks(static_cast<BlockingCall>(ev)) ? "CPU" : "Unreported";
        *name = blocking_call_name(static_cast<BlockingCall>(ev));
    } else {
        uint32 info = wait_info_make(cls, ev);
        *type = pgstat_get_wait_event_type(info);
        *name = pgstat_get_wait_event(info);
    }
}

}  // namespace psw
