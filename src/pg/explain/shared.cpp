// Where parallel workers leave the waits of their nodes for their leader
// (internal.h). One slot per process that can lead (a backend), found by its
// proc number, in the fixed shared memory: a token names the EXPLAIN the
// slot serves, so a worker of an earlier one (or a token set by hand) adds
// nothing, and a handle names the leader's tables.
//
// The tables are a dynamic shared memory segment the leader makes when its
// explained query's plan is parallel, sized by the plan: one NodeWaits per
// node, as the leader's own, and one for the workers' waits outside nodes.
// So a worker's node keeps everything it waited on, its "other events"
// included, however many nodes and events the plan has; a fixed number of
// rows per slot sent what did not fit to the waits outside nodes. Workers
// add once, when they end; the leader reads once, when it prints, after
// every worker has ended. A spinlock in the segment covers the adds: each
// worker adds only the nodes it ran, a few dozen adds each.
#include "internal.h"

namespace psw {

namespace {

struct Slot {
    slock_t mutex;
    uint32 token;       // the EXPLAIN served, 0: none
    dsm_handle tables;  // its workers' tables, DSM_HANDLE_INVALID: none
};

struct ExplainShared {
    pg_atomic_uint32 next_token;
    int32 nslots;
    Slot slots[FLEXIBLE_ARRAY_MEMBER];
};

// The segment: the workers' waits by plan_node_id.
struct WorkerTables {
    slock_t mutex;
    int32 nnodes;
    NodeWaits outside;
    NodeWaits nodes[1];  // nnodes of them
};

ExplainShared *explain_shared = nullptr;
// The leader's segment while its EXPLAIN is armed; mapped until the
// EXPLAIN ends (not the resource owner's: the ends are disarm's).
dsm_segment *tables_seg = nullptr;

int slot_count() { return compat_has_explain_options() ? MaxBackends : 0; }

Size explain_size() { return add_size(offsetof(ExplainShared, slots), mul_size(slot_count(), sizeof(Slot))); }

void explain_init(void *ptr, bool found) {
    explain_shared = static_cast<ExplainShared *>(ptr);
    if (found) return;
    pg_atomic_init_u32(&explain_shared->next_token, 0);
    explain_shared->nslots = slot_count();
    for (int i = 0; i < explain_shared->nslots; i++) {
        Slot &s = explain_shared->slots[i];
        SpinLockInit(&s.mutex);
        s.token = 0;
        s.tables = DSM_HANDLE_INVALID;
    }
}

Slot *slot_of(int procno) {
    if (explain_shared == nullptr || procno < 0 || procno >= explain_shared->nslots) return nullptr;
    return &explain_shared->slots[procno];
}

// Adds from's events and its "other events" to to's: what finds no room
// among to's events is to's "other events", on the same node.
void merge(NodeWaits *to, const NodeWaits &from) {
    for (int i = 0; i < from.size(); i++) to->add(from.at(i).index, from.at(i).calls, from.at(i).ns);
    if (from.other_calls() != 0) to->add_other(from.other_calls(), from.other_ns());
}

void drop_tables() {
    if (tables_seg != nullptr) dsm_detach(tables_seg);
    tables_seg = nullptr;
}

}  // namespace

const ShmemPart explain_part = {"pg_stat_waits explain", explain_size, explain_init};

uint32 explain_slot_open() {
    Slot *s = slot_of(compat_my_procno());
    if (s == nullptr) return 0;
    drop_tables();
    // Tokens fit the setting (a positive int) and are never 0.
    uint32 token = 0;
    while (token == 0) token = (pg_atomic_add_fetch_u32(&explain_shared->next_token, 1)) & 0x7FFFFFFFU;
    SpinLockAcquire(&s->mutex);
    s->token = token;
    s->tables = DSM_HANDLE_INVALID;
    SpinLockRelease(&s->mutex);
    return token;
}

bool explain_slot_share(int nnodes) {
    Slot *s = slot_of(compat_my_procno());
    if (s == nullptr || nnodes <= 0 || tables_seg != nullptr) return false;
    const Size bytes = add_size(offsetof(WorkerTables, nodes), mul_size(nnodes, sizeof(NodeWaits)));
    // Out of segments: the workers' waits are not shown, the query runs.
    dsm_segment *seg = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
    if (seg == nullptr) return false;
    dsm_pin_mapping(seg);
    auto *t = static_cast<WorkerTables *>(dsm_segment_address(seg));
    SpinLockInit(&t->mutex);
    t->nnodes = nnodes;
    t->outside.clear();
    for (int i = 0; i < nnodes; i++) t->nodes[i].clear();
    tables_seg = seg;
    SpinLockAcquire(&s->mutex);
    s->tables = dsm_segment_handle(seg);
    SpinLockRelease(&s->mutex);
    return true;
}

void explain_slot_close() {
    Slot *s = slot_of(compat_my_procno());
    if (s != nullptr) {
        SpinLockAcquire(&s->mutex);
        s->token = 0;
        s->tables = DSM_HANDLE_INVALID;
        SpinLockRelease(&s->mutex);
    }
    drop_tables();
}

bool explain_slot_current(int leader_procno, uint32 token) {
    Slot *s = slot_of(leader_procno);
    if (s == nullptr || token == 0) return false;
    SpinLockAcquire(&s->mutex);
    bool current = s->token == token;
    SpinLockRelease(&s->mutex);
    return current;
}

void explain_slot_add(int leader_procno, uint32 token, const ExplainRun *r, const NodeWaits &outside) {
    Slot *s = slot_of(leader_procno);
    if (s == nullptr || token == 0) return;
    SpinLockAcquire(&s->mutex);
    const dsm_handle h = s->token == token ? s->tables : DSM_HANDLE_INVALID;
    SpinLockRelease(&s->mutex);
    if (h == DSM_HANDLE_INVALID) return;
    // The leader keeps the segment until it prints, after this worker has
    // ended: it is there.
    dsm_segment *seg = dsm_attach(h);
    if (seg == nullptr) return;
    auto *t = static_cast<WorkerTables *>(dsm_segment_address(seg));
    SpinLockAcquire(&t->mutex);
    for (int id = 0; id < r->nnodes && id < t->nnodes; id++)
        if (!r->nodes[id].waits.empty()) merge(&t->nodes[id], r->nodes[id].waits);
    merge(&t->outside, outside);
    SpinLockRelease(&t->mutex);
    dsm_detach(seg);
}

void explain_slot_take(ExplainRun *r, NodeWaits *outside) {
    if (tables_seg == nullptr) return;
    auto *t = static_cast<WorkerTables *>(dsm_segment_address(tables_seg));
    SpinLockAcquire(&t->mutex);
    for (int id = 0; id < t->nnodes; id++) {
        if (t->nodes[id].empty()) continue;
        // A node id past the leader's run (none should be) still counts,
        // outside nodes.
        merge(r != nullptr && id < r->nnodes ? &r->nodes[id].waits : outside, t->nodes[id]);
        t->nodes[id].clear();
    }
    merge(outside, t->outside);
    t->outside.clear();
    SpinLockRelease(&t->mutex);
}

}  // namespace psw
