#include "wait_catalog.h"

#include <cstring>

namespace psw {
namespace {

// Event counts per class in PostgreSQL 15 (utils/wait_event.h, storage/lock.h
// LOCKTAG_LAST_TYPE + 1, storage/lwlock.h LWTRANCHE_FIRST_USER_DEFINED).
// A regression test checks them against the running server's names.
const WaitClassInfo kClasses[] = {
    {kClassCPU, "CPU", 1},
    {kClassLWLock, "LWLock", 75},
    {kClassLock, "Lock", 11},
    {kClassBufferPin, "BufferPin", 1},
    {kClassActivity, "Activity", 12},
    {kClassClient, "Client", 8},
    {kClassExtension, "Extension", 1},
    {kClassIPC, "IPC", 52},
    {kClassTimeout, "Timeout", 8},
    {kClassIO, "IO", 74},
    {kClassUnreported, "Unreported", kBlockingCallCount},
};
constexpr int kClassCount = sizeof(kClasses) / sizeof(kClasses[0]);

const char *const kCallNames[kBlockingCallCount] = {
    "epoll_wait", "sem_wait", "pread", "pwrite", "pwritev", "preadv", "fsync", "fdatasync",
    "sync_file_range", "posix_fallocate", "ftruncate", "select", "recv", "send", "poll", "nanosleep",
};

struct Layout {
    uint16_t base[256];      // first index of each class byte, 0xFFFF if unknown
    uint16_t class_pos[256]; // position in kClasses
    uint16_t total;
    uint16_t unknown_index;  // one slot for class bytes PG 15 does not define
};

Layout make_layout() {
    Layout l;
    for (int i = 0; i < 256; i++) {
        l.base[i] = 0xFFFF;
        l.class_pos[i] = 0xFFFF;
    }
    uint16_t next = 0;
    for (int i = 0; i < kClassCount; i++) {
        l.base[kClasses[i].id] = next;
        l.class_pos[kClasses[i].id] = static_cast<uint16_t>(i);
        next = static_cast<uint16_t>(next + kClasses[i].events + 1);
    }
    l.unknown_index = next;
    l.total = static_cast<uint16_t>(next + 1);
    return l;
}

const Layout &layout() {
    static const Layout l = make_layout();
    return l;
}

}  // namespace

const char *blocking_call_name(BlockingCall c) {
    return c < kBlockingCallCount ? kCallNames[c] : "unknown";
}

BlockingCall blocking_call_from_name(const std::string &name) {
    for (int i = 0; i < kBlockingCallCount; i++)
        if (name == kCallNames[i]) return static_cast<BlockingCall>(i);
    return kBlockingCallCount;
}

int wait_class_count() { return kClassCount; }
const WaitClassInfo &wait_class_at(int i) { return kClasses[i]; }

const WaitClassInfo *wait_class_by_id(uint8_t id) {
    uint16_t pos = layout().class_pos[id];
    return pos == 0xFFFF ? nullptr : &kClasses[pos];
}

const WaitClassInfo *wait_class_by_name(const std::string &name) {
    for (const auto &c : kClasses)
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
    const WaitClassInfo &c = kClasses[l.class_pos[cls]];
    return ev < c.events ? static_cast<uint16_t>(base + ev) : static_cast<uint16_t>(base + c.events);
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
        uint16_t base = l.base[kClasses[i].id];
        if (index >= base) {
            *class_id = kClasses[i].id;
            uint16_t off = static_cast<uint16_t>(index - base);
            *is_other = off >= kClasses[i].events;
            *event_id = *is_other ? 0xFFFF : off;
            return true;
        }
    }
    return false;
}

}  // namespace psw
