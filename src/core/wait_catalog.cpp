#include "wait_catalog.h"

#include <cstring>

namespace psw {
namespace {

// Every class byte PostgreSQL 15-19 defines, in catalog order; sizes (and a
// renamed class's name) come from wait_catalog_init().
const WaitClassInfo kClassTemplate[] = {
    {kClassCPU, "CPU", 1},
    {kClassLWLock, "LWLock", 0},
    {kClassLock, "Lock", 0},
    {kClassBufferPin, "BufferPin", 0},
    {kClassActivity, "Activity", 0},
    {kClassClient, "Client", 0},
    {kClassExtension, "Extension", 0},
    {kClassIPC, "IPC", 0},
    {kClassTimeout, "Timeout", 0},
    {kClassIO, "IO", 0},
    {kClassInjectionPoint, "InjectionPoint", 0},
    {kClassUnreported, "Unreported", kBlockingCallCount},
};
constexpr int kClassCount = sizeof(kClassTemplate) / sizeof(kClassTemplate[0]);

// PostgreSQL 15's sizes (utils/wait_event.h, storage/lock.h
// LOCKTAG_LAST_TYPE + 1, storage/lwlock.h LWTRANCHE_FIRST_USER_DEFINED):
// the layout before wait_catalog_init().
const WaitClassSize kPg15Sizes[] = {
    {kClassLWLock, 75}, {kClassLock, 11},    {kClassBufferPin, 1}, {kClassActivity, 12}, {kClassClient, 8},
    {kClassExtension, 1}, {kClassIPC, 52}, {kClassTimeout, 8},   {kClassIO, 74},
};

const char *const kCallNames[kBlockingCallCount] = {
    "epoll_wait",
    "sem_wait",
    "pread",
    "pwrite",
    "pwritev",
    "preadv",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "posix_fallocate",
    "ftruncate",
    "select",
    "recv",
    "send",
    "poll",
    "nanosleep",
    "io_uring_submit",
    "io_uring_submit_and_wait",
    "io_uring_wait_cqes",
    "io_uring_wait_cqe_timeout",
    "io_uring_get_events",
    "io_uring_enter",
};

struct Layout {
    WaitClassInfo classes[kClassCount];
    uint16_t base[256];       // first index of each class byte, 0xFFFF if unknown
    uint16_t class_pos[256];  // position in classes
    uint16_t total;
    uint16_t unknown_index;   // one slot for class bytes no release defines
};

Layout layout_state;

bool build(const WaitClassSize *sizes, int n) {
    Layout &l = layout_state;
    bool fits = true;
    std::memcpy(l.classes, kClassTemplate, sizeof(kClassTemplate));
    for (int i = 0; i < n; i++) {
        if (sizes[i].id == kClassCPU || sizes[i].id == kClassUnreported) continue;
        for (auto &c : l.classes) {
            if (c.id != sizes[i].id) continue;
            c.events = sizes[i].events;
            if (sizes[i].name != nullptr && sizes[i].name[0] != '\0') c.name = sizes[i].name;
        }
    }
    // Fixed parts first: every class's "other" slot, CPU, Unreported and
    // the unknown-class slot always fit.
    uint32_t fixed = 1;
    for (const auto &c : l.classes) {
        fixed += 1;
        if (c.id == kClassCPU || c.id == kClassUnreported) fixed += c.events;
    }
    uint32_t room = kWaitIndexLimit - fixed;
    for (auto &c : l.classes) {
        if (c.id == kClassCPU || c.id == kClassUnreported) continue;
        if (c.events > room) {
            c.events = static_cast<uint16_t>(room);
            fits = false;
        }
        room -= c.events;
    }
    for (int i = 0; i < 256; i++) {
        l.base[i] = 0xFFFF;
        l.class_pos[i] = 0xFFFF;
    }
    uint16_t next = 0;
    for (int i = 0; i < kClassCount; i++) {
        l.base[l.classes[i].id] = next;
        l.class_pos[l.classes[i].id] = static_cast<uint16_t>(i);
        next = static_cast<uint16_t>(next + l.classes[i].events + 1);
    }
    l.unknown_index = next;
    l.total = static_cast<uint16_t>(next + 1);
    return fits;
}

// The default layout is built at load time (before main or _PG_init), so
// no reader ever races a lazy build.
const bool default_built = build(kPg15Sizes, sizeof(kPg15Sizes) / sizeof(kPg15Sizes[0]));

const Layout &layout() { return layout_state; }

}  // namespace

bool wait_catalog_init(const WaitClassSize *sizes, int n) { return build(sizes, n); }

void wait_catalog_init_pg15() { build(kPg15Sizes, sizeof(kPg15Sizes) / sizeof(kPg15Sizes[0])); }

const char *blocking_call_name(BlockingCall c) { return c < kBlockingCallCount ? kCallNames[c] : "unknown"; }

BlockingCall blocking_call_from_name(const std::string &name) {
    for (int i = 0; i < kBlockingCallCount; i++)
        if (name == kCallNames[i]) return static_cast<BlockingCall>(i);
    return kBlockingCallCount;
}

int wait_class_count() { return kClassCount; }
const WaitClassInfo &wait_class_at(int i) { return layout().classes[i]; }

const WaitClassInfo *wait_class_by_id(uint8_t id) {
    const Layout &l = layout();
    uint16_t pos = l.class_pos[id];
    return pos == 0xFFFF ? nullptr : &l.classes[pos];
}

const WaitClassInfo *wait_class_by_name(const std::string &name) {
    const Layout &l = layout();
    for (const auto &c : l.classes)
        if (name == c.name) return &c;
    return nullptr;
}

uint16_t wait_index_count() { return layout().total; }

uint16_t wait_index(uint32_t info) {
    const Layout &l = layout();
    if (info == 0) return l.base[kClassCPU];
    uint8_t cls = static_cast<uint8_t>(info >> 24);
    uint32_t ev = info & 0xFFFFFFu;
    uint16_t base = l.base[cls];
    if (base == 0xFFFF || cls == kClassCPU || cls == kClassUnreported) return l.unknown_index;
    const WaitClassInfo &c = l.classes[l.class_pos[cls]];
    return ev < c.events ? static_cast<uint16_t>(base + ev) : static_cast<uint16_t>(base + c.events);
}

uint16_t wait_other_index(uint8_t class_id) {
    const Layout &l = layout();
    uint16_t base = l.base[class_id];
    if (base == 0xFFFF) return l.unknown_index;
    return static_cast<uint16_t>(base + l.classes[l.class_pos[class_id]].events);
}

uint16_t unreported_index(BlockingCall c) {
    return static_cast<uint16_t>(layout().base[kClassUnreported] + (c < kBlockingCallCount ? c : kBlockingCallCount));
}

bool index_is_cpu_work(uint16_t index) {
    uint16_t base = layout().base[kClassUnreported];
    return index >= base && index - base < kBlockingCallCount && call_never_blocks(static_cast<BlockingCall>(index - base));
}

bool wait_index_decode(uint16_t index, uint8_t *class_id, uint16_t *event_id, bool *is_other) {
    const Layout &l = layout();
    if (index >= l.total) return false;
    if (index == l.unknown_index) {
        *class_id = 0xFF;
        *event_id = 0xFFFF;
        *is_other = true;
        return true;
    }
    for (int i = kClassCount - 1; i >= 0; i--) {
        uint16_t base = l.base[l.classes[i].id];
        if (index >= base) {
            *class_id = l.classes[i].id;
            uint16_t off = static_cast<uint16_t>(index - base);
            *is_other = off >= l.classes[i].events;
            *event_id = *is_other ? 0xFFFF : off;
            return true;
        }
    }
    return false;
}

}  // namespace psw
