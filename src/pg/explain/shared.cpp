// The leaders' slots in shared memory where parallel workers leave the waits
// of their nodes (internal.h). One slot per process that can lead (a
// backend), found by its proc number; a token names the EXPLAIN the slot
// serves, so a worker of an earlier one (or a token set by hand) adds
// nothing. Workers add once, when they end; the leader reads once, when it
// prints, after every worker has ended. A spinlock covers each: the work
// under it is a few dozen adds.
#include "internal.h"

namespace psw {

namespace {

// Room for this many (node, event) rows per EXPLAIN; rows past it are
// summed into the slot's lost_* (printed with the waits outside nodes).
constexpr int kSlotRows = 64;

struct SlotRow {
    int32 plan_node_id;  // -1: outside every node
    uint16 index;
    uint64 calls;
    uint64 ns;
};

struct Slot {
    slock_t mutex;
    uint32 token;  // the EXPLAIN served, 0: none
    int32 nrows;
    uint64 lost_calls;
    uint64 lost_ns;
    SlotRow rows[kSlotRows];
};

struct ExplainShared {
    pg_atomic_uint32 next_token;
    int32 nslots;
    Slot slots[FLEXIBLE_ARRAY_MEMBER];
};

ExplainShared *explain_shared = nullptr;

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
        s.nrows = 0;
        s.lost_calls = 0;
        s.lost_ns = 0;
    }
}

Slot *slot_of(int procno) {
    if (explain_shared == nullptr || procno < 0 || procno >= explain_shared->nslots) return nullptr;
    return &explain_shared->slots[procno];
}

void add_row(Slot *s, int32 id, uint16 index, uint64 calls, uint64 ns) {
    for (int i = 0; i < s->nrows; i++) {
        SlotRow &r = s->rows[i];
        if (r.plan_node_id == id && r.index == index) {
            r.calls += calls;
            r.ns += ns;
            return;
        }
    }
    if (s->nrows == kSlotRows) {
        s->lost_calls += calls;
        s->lost_ns += ns;
        return;
    }
    s->rows[s->nrows++] = SlotRow{id, index, calls, ns};
}

void add_table(Slot *s, int32 id, const NodeWaits &w) {
    for (int i = 0; i < w.size(); i++) add_row(s, id, w.at(i).index, w.at(i).calls, w.at(i).ns);
    if (w.other_calls() != 0) {
        s->lost_calls += w.other_calls();
        s->lost_ns += w.other_ns();
    }
}

}  // namespace

const ShmemPart explain_part = {"pg_stat_waits explain", explain_size, explain_init};

uint32 explain_slot_open() {
    Slot *s = slot_of(compat_my_procno());
    if (s == nullptr) return 0;
    // Tokens fit the setting (a positive int) and are never 0.
    uint32 token = 0;
    while (token == 0) token = (pg_atomic_add_fetch_u32(&explain_shared->next_token, 1)) & 0x7FFFFFFFU;
    SpinLockAcquire(&s->mutex);
    s->token = token;
    s->nrows = 0;
    s->lost_calls = 0;
    s->lost_ns = 0;
    SpinLockRelease(&s->mutex);
    return token;
}

void explain_slot_close() {
    Slot *s = slot_of(compat_my_procno());
    if (s == nullptr) return;
    SpinLockAcquire(&s->mutex);
    s->token = 0;
    SpinLockRelease(&s->mutex);
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
    if (s->token == token) {
        for (int id = 0; id < r->nnodes; id++)
            if (!r->nodes[id].waits.empty()) add_table(s, id, r->nodes[id].waits);
        add_table(s, -1, outside);
    }
    SpinLockRelease(&s->mutex);
}

void explain_slot_take(ExplainRun *r, NodeWaits *outside) {
    Slot *s = slot_of(compat_my_procno());
    if (s == nullptr) return;
    SpinLockAcquire(&s->mutex);
    const int n = s->nrows;
    SlotRow rows[kSlotRows];
    for (int i = 0; i < n; i++) rows[i] = s->rows[i];
    const uint64 lost_calls = s->lost_calls, lost_ns = s->lost_ns;
    s->nrows = 0;
    s->lost_calls = 0;
    s->lost_ns = 0;
    SpinLockRelease(&s->mutex);
    for (int i = 0; i < n; i++) {
        const SlotRow &row = rows[i];
        NodeWaits *to = row.plan_node_id >= 0 && r != nullptr && row.plan_node_id < r->nnodes
                            ? &r->nodes[row.plan_node_id].waits
                            : outside;
        to->add(row.index, row.calls, row.ns);
    }
    // What found no room in the slot still counts, as waits outside nodes
    // of no named event.
    if (lost_calls != 0) outside->add_other(lost_calls, lost_ns);
}

}  // namespace psw
