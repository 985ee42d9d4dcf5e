// The catalog of wait events as a dense index, PostgreSQL-free.
//
// Why: exact timing keeps per-backend counters in a flat array, so every
// wait_event_info (class byte | event id) must map to a small, stable index.
// How many events each class has depends on the PostgreSQL major and minor
// release (minor releases append events), so the boundary measures the
// running server at preload and hands the sizes in with wait_catalog_init()
// before any process forks; every process then shares one layout. Names of
// individual events come from PostgreSQL at the boundary; this file knows
// classes, the synthetic 'CPU' and 'Unreported' rows, and the blocking calls
// that are interposed.
#pragma once

#include <cstdint>
#include <string>

namespace psw {

// Class ids are the top byte of wait_event_info (PG_WAIT_* in PostgreSQL).
enum WaitClassId : uint8_t {
    kClassCPU = 0x00,  // wait_event_info == 0 while active
    kClassLWLock = 0x01,
    kClassLock = 0x03,
    // "BufferPin" on 15-18, "Buffer" on 19 (with buffer content locks).
    kClassBufferPin = 0x04,
    kClassActivity = 0x05,
    kClassClient = 0x06,
    kClassExtension = 0x07,
    kClassIPC = 0x08,
    kClassTimeout = 0x09,
    kClassIO = 0x0A,
    kClassInjectionPoint = 0x0B,  // PostgreSQL 17 and later
    kClassUnreported = 0xFE,      // synthetic: blocking call with no wait event set
};

// Blocking C library calls that pg_stat_waits interposes.
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
    // liburing (PostgreSQL 18 built with liburing, io_method = io_uring):
    // the calls that enter the kernel and may sleep there.
    kCallIoUringSubmit,
    kCallIoUringSubmitAndWait,
    kCallIoUringWaitCqes,
    kCallIoUringWaitCqeTimeout,
    kCallIoUringGetEvents,
    kCallIoUringEnter,
    kBlockingCallCount
};

const char *blocking_call_name(BlockingCall c);

// Calls that never block in PostgreSQL: its client sockets are non-blocking
// (pq_init), a recv/send that would block returns EAGAIN and the backend
// waits in epoll_wait under ClientRead/ClientWrite. They are not clocked.
// Their rows ('CPU'/<call>: kernel work on the CPU, never subtracted from a
// statement's CPU time) stay in the catalog for statistics files saved by
// builds that did clock them.
constexpr bool call_never_blocks(BlockingCall c) { return c == kCallRecv || c == kCallSend; }
// Whether a dense index is such a call's (see unreported_index()).
bool index_is_cpu_work(uint16_t index);
// Returns kBlockingCallCount when the name is not an interposed call.
BlockingCall blocking_call_from_name(const std::string &name);

struct WaitClassInfo {
    uint8_t id;
    const char *name;
    uint16_t events;  // event ids 0..events-1 have their own index
};

// Most indexes the layout may use (exact timing's per-event arrays hold
// this many); wait_catalog_init() shrinks classes that would not fit.
constexpr uint16_t kWaitIndexLimit = 1024;

// Number of event ids of one class on the running server, and the
// server's name of the class (nullptr keeps the catalog's: a release may
// rename a class, as 19 renamed BufferPin to Buffer). A name must outlive
// the process (a string literal of the server's).
struct WaitClassSize {
    uint8_t id;
    uint16_t events;
    const char *name = nullptr;
};

// Sets the layout from the running server's class sizes. Classes not listed
// keep 0 events (everything in their "other" slot); CPU always has 1 and
// Unreported one per blocking call, whatever is passed. Sizes that would not
// fit under kWaitIndexLimit are cut (the rest goes to "other"); returns false
// then. Call once per process before any wait_index() that matters (the
// postmaster calls it at preload, children inherit it).
bool wait_catalog_init(const WaitClassSize *sizes, int n);
// The layout before any init: PostgreSQL 15's sizes (unit tests, and a
// safe default should a caller index before init).
void wait_catalog_init_pg15();

// All classes in catalog order (CPU first, Unreported last).
int wait_class_count();
const WaitClassInfo &wait_class_at(int i);
// nullptr when the class byte is unknown.
const WaitClassInfo *wait_class_by_id(uint8_t id);
const WaitClassInfo *wait_class_by_name(const std::string &name);

// Dense index layout: for each class, `events` slots followed by one
// "other" slot for ids past the class's size. CPU and Unreported follow the
// same rule; one final slot takes unknown class bytes.
uint16_t wait_index_count();
uint16_t wait_index(uint32_t wait_event_info);
uint16_t unreported_index(BlockingCall c);
// Inverse mapping. Returns false for an index out of range. For an "other"
// slot *event_id is 0xFFFF and *is_other is true; the unknown-class slot
// has *class_id 0xFF.
bool wait_index_decode(uint16_t index, uint8_t *class_id, uint16_t *event_id, bool *is_other);
// The "other" slot of a class (the unknown-class slot for an unknown byte).
uint16_t wait_other_index(uint8_t class_id);

inline uint32_t wait_info_make(uint8_t class_id, uint16_t event_id) {
    return (static_cast<uint32_t>(class_id) << 24) | event_id;
}

}  // namespace psw
