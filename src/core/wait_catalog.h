// The catalog of PostgreSQL 15 wait events as a dense index.
//
// Why: exact timing keeps per-backend counters in a flat array, so every
// wait_event_info (class byte | event id) must map to a small, stable index.
// Names of individual events come from PostgreSQL at the boundary
// (pgstat_get_wait_event); this file knows classes, their sizes in PG 15, the
// synthetic 'CPU' and 'Unreported' rows, and the blocking calls we interpose.
#pragma once

#include <cstdint>
#include <string>

namespace psw {

// Class ids are the top byte of wait_event_info (PG_WAIT_* in wait_event.h).
enum WaitClassId : uint8_t {
    kClassCPU = 0x00,  // wait_event_info == 0 while active
    kClassLWLock = 0x01,
    kClassLock = 0x03,
    kClassBufferPin = 0x04,
    kClassActivity = 0x05,
    kClassClient = 0x06,
    kClassExtension = 0x07,
    kClassIPC = 0x08,
    kClassTimeout = 0x09,
    kClassIO = 0x0A,
    kClassUnreported = 0xFE,  // synthetic: blocking call with no wait event set
};

// Blocking C library calls that pg_stat_waits interposes (DESIGN.md §4).
enum BlockingCall : uint8_t {
    kCallEpollWait,
    kCallSemWait,
    kCallPread,
    kCallPwrite,
    kCallPwritev,
    kCallPreadv,
    kCallFsync,
    kCallFdatasync,
    kCallSyncFileRange,
    kCallPosixFallocate,
    kCallFtruncate,
    kCallSelect,
    kCallRecv,
    kCallSend,
    kCallPoll,
    kCallNanosleep,
    kBlockingCallCount
};

const char *blocking_call_name(BlockingCall c);

// Calls that never block in PostgreSQL: its client sockets are non-blocking
// (pq_init), a recv/send that would block returns EAGAIN and the backend
// waits in epoll_wait under ClientRead/ClientWrite. Their time is kernel
// work on the CPU, shown as 'CPU'/<call> and never subtracted from a
// statement's CPU time.
constexpr bool call_never_blocks(BlockingCall c) { return c == kCallRecv || c == kCallSend; }
// Whether a dense index is such a call's (see unreported_index()).
bool index_is_cpu_work(uint16_t index);
// Returns kBlockingCallCount when the name is not an interposed call.
BlockingCall blocking_call_from_name(const std::string &name);

struct WaitClassInfo {
    uint8_t id;
    const char *name;
    uint16_t events;  // number of event ids the class has in PostgreSQL 15
};

// All classes in catalog order (CPU first, Unreported last).
int wait_class_count();
const WaitClassInfo &wait_class_at(int i);
// nullptr when the class byte is unknown.
const WaitClassInfo *wait_class_by_id(uint8_t id);
const WaitClassInfo *wait_class_by_name(const std::string &name);

// Dense index layout: for each class, `events` slots followed by one
// "other" slot for ids PostgreSQL 15 does not define (extension LWLock
// tranches, future events). CPU and Unreported follow the same rule.
uint16_t wait_index_count();
uint16_t wait_index(uint32_t wait_event_info);
uint16_t unreported_index(BlockingCall c);
// Inverse mapping. Returns false for an index out of range. For an "other"
// slot *event_id is 0xFFFF and *is_other is true.
bool wait_index_decode(uint16_t index, uint8_t *class_id, uint16_t *event_id, bool *is_other);

inline uint32_t wait_info_make(uint8_t class_id, uint16_t event_id) {
    return (static_cast<uint32_t>(class_id) << 24) | event_id;
}

}  // namespace psw
