// Display names of wait events and dense wait indexes, shared by the
// exact-timing views, the sampled views and pg_stat_waits_wait_events().
#include "wait_names.h"

#include "compat.h"
#include "../core/wait_catalog.h"

namespace psw {

void wait_info_names(uint32 info, const char **type, const char **name) {
    if (info == 0) {
        *type = "CPU";
        *name = "CPU";
        return;
    }
    bool named;
    const WaitClassInfo *c = wait_class_by_id(static_cast<uint8>(info >> 24));
    *name = compat_wait_event_name(info, &named);
    *type = c != nullptr ? c->name : compat_wait_event_type(info);
}

// Whether idx is a real event slot the server names; *name is its display
// name ("other" for overflow and unknown-class slots).
static bool slot_name(uint16 idx, uint8 *cls, const char **name) {
    uint16 ev;
    bool other;
    *name = "other";
    *cls = 0xFF;
    if (!wait_index_decode(idx, cls, &ev, &other) || other) return false;
    if (*cls == kClassCPU) {
        *name = "CPU";
        return true;
    }
    if (*cls == kClassUnreported) {
        *name = blocking_call_name(static_cast<BlockingCall>(ev));
        return true;
    }
    bool named;
    *name = compat_wait_event_name(wait_info_make(*cls, ev), &named);
    return named;
}

void index_names(uint16 idx, const char **type, const char **name) {
    uint8 cls;
    (void)slot_name(idx, &cls, name);  // unnamed slots show the server's placeholder or "other"
    const WaitClassInfo *c = cls == 0xFF ? nullptr : wait_class_by_id(cls);
    *type = c != nullptr ? c->name : "Other";
    // A call that never blocks (non-blocking client socket I/O) is CPU work
    // in the kernel, not a wait: 'CPU'/<call>.
    if (cls == kClassUnreported && index_is_cpu_work(idx)) *type = "CPU";
}

bool index_is_listed(uint16 idx) {
    uint8 cls;
    uint16 ev;
    bool other;
    if (!wait_index_decode(idx, &cls, &ev, &other) || other) return false;
    const char *n;
    return slot_name(idx, &cls, &n);
}

int find_wait_index(const char *type, const char *name) {
    if (type == nullptr || name == nullptr) return -1;
    const WaitClassInfo *c = wait_class_by_name(type);
    if (c == nullptr) return strcmp(type, "Other") == 0 && strcmp(name, "other") == 0 ? wait_other_index(0xFF) : -1;
    if (strcmp(name, "other") == 0) return wait_other_index(c->id);
    if (c->id == kClassCPU && strcmp(name, "CPU") != 0) {  // 'CPU'/<call that never blocks>
        BlockingCall call = blocking_call_from_name(name);
        return call != kBlockingCallCount && call_never_blocks(call) ? unreported_index(call) : -1;
    }
    uint16 base = wait_index(c->id == kClassCPU ? 0 : wait_info_make(c->id, 0));
    if (c->id == kClassUnreported) base = unreported_index(static_cast<BlockingCall>(0));
    for (uint16 ev = 0; ev < c->events; ev++) {
        uint8 cls;
        const char *n;
        if (slot_name(static_cast<uint16>(base + ev), &cls, &n) && strcmp(n, name) == 0)
            return base + ev;
    }
    return -1;
}

}  // namespace psw
