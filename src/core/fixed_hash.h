// Fixed-capacity open-addressing hash table of counters, laid out in a raw
// memory region (shared memory) and never resized.
//
// Why fixed: shared memory is sized at postmaster start; a key that does not
// fit is refused (the caller counts what it drops — nothing is lost
// silently). Keys are trivially copyable and compared bytewise, so callers
// must zero padding (build keys with memset or value-initialization).
// One writer at a time; readers copy the region under a SeqRegion.
//
// Why eviction: a table that only fills goes blind to every key that comes
// after it is full (a server running for weeks with an ORM reaches any
// limit). evict() frees room the way pg_stat_statements keeps its table
// useful, least used and least recent first, but in bounded steps so the
// writer (the sampler) never stalls on a whole-table sort: a second-chance
// clock (GCLOCK). Every add raises a key's usage (capped at kMaxUsage); the
// clock hand lowers it as it passes and evicts keys it finds at zero, so a
// key survives about usage passes of the hand after its last add. Deletion
// shifts later entries of the probe run back (no tombstones), so lookups
// and the load factor stay as good as before any eviction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace psw {

inline uint64_t hash_bytes(const void *data, size_t len) {
    // Eight bytes at a time (keys are 16 and 24 bytes; the sampler hashes one
    // per sample, and a byte-at-a-time FNV loop was a tenth of its CPU), any
    // tail bytewise, then a 64-bit finalizer to spread the low bits that the
    // power-of-two mask keeps.
    const unsigned char *p = static_cast<const unsigned char *>(data);
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        h ^= w;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 29;
    }
    for (; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

// Calls visit(key, count) once per run of bytewise-equal neighbouring keys.
// Why: the sampler's keys come in process order and neighbours often match
// (a pool's sessions in the same wait and statement), so counting a run is
// one hash lookup instead of one per sample. Keys compare bytewise, as in
// the table below.
template <typename Key, typename Visit>
void for_each_run(const Key *keys, size_t n, Visit &&visit) {
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && std::memcmp(&keys[j], &keys[i], sizeof(Key)) == 0) j++;
        visit(keys[i], static_cast<uint64_t>(j - i));
        i = j;
    }
}

template <typename Key>
class FixedHashTable {
    static_assert(std::is_trivially_copyable<Key>::value, "shared memory holds trivially copyable data");

public:
    // A key used in this many sampler ticks (or adds) since the hand last
    // passed survives that many more passes.
    static constexpr uint32_t kMaxUsage = 8;

    struct Slot {
        uint64_t count;  // 0 = empty slot (a present key always has count > 0)
        uint32_t usage;  // clock usage, 0..kMaxUsage
        uint32_t pad;
        Key key;
    };
    struct Header {
        uint64_t slots;    // power of two, at least 2 × limit
        uint64_t limit;    // most keys the table accepts
        uint64_t used;     // keys present
        uint64_t hand;     // clock hand of evict(), a slot index
        uint64_t evicted;  // keys evicted since init/clear
        uint64_t pad[3];
    };

    static uint64_t slots_for(uint64_t limit) {
        uint64_t s = 16;
        while (s < 2 * limit) s <<= 1;
        return s;
    }
    static size_t bytes(uint64_t limit) { return sizeof(Header) + slots_for(limit) * sizeof(Slot); }

    FixedHashTable() = default;
    explicit FixedHashTable(void *mem) : header_(static_cast<Header *>(mem)) {}

    void init(uint64_t limit) {
        uint64_t slots = slots_for(limit);
        std::memset(static_cast<void *>(header_), 0, sizeof(Header) + slots * sizeof(Slot));
        header_->slots = slots;
        header_->limit = limit;
    }
    void clear() {
        std::memset(static_cast<void *>(slots()), 0, header_->slots * sizeof(Slot));
        header_->used = 0;
        header_->hand = 0;
        __atomic_store_n(&header_->evicted, 0, __ATOMIC_RELAXED);
    }

    uint64_t used() const { return header_->used; }
    // Racy-read safe: readers may call it without the writer's lock.
    uint64_t evicted() const { return __atomic_load_n(&header_->evicted, __ATOMIC_RELAXED); }
    // Restores the eviction counter (loading saved statistics).
    void set_evicted(uint64_t n) { header_->evicted = n; }
    uint64_t limit() const { return header_->limit; }
    uint64_t slot_count() const { return header_->slots; }

    // Adds n (> 0) to key's counter. A new key is accepted only while fewer
    // than key_limit keys are present (key_limit <= limit()); returns false
    // when it was refused.
    bool add(const Key &key, uint64_t n, uint64_t key_limit) {
        Slot &slot = slots()[probe(key)];
        if (slot.count == 0) {
            if (header_->used >= key_limit || header_->used >= header_->limit) return false;
            slot.key = key;
            slot.usage = usage_after(0, n);
            __atomic_store_n(&slot.count, n, __ATOMIC_RELAXED);
            header_->used++;
            return true;
        }
        slot.usage = usage_after(slot.usage, n);
        __atomic_store_n(&slot.count, slot.count + n, __ATOMIC_RELAXED);
        return true;
    }
    bool add(const Key &key, uint64_t n) { return add(key, n, header_->limit); }

    // Takes up to n from key's counter (a key left at zero is removed) and
    // returns how much it took: 0 when the key is absent.
    uint64_t take(const Key &key, uint64_t n) {
        uint64_t i = probe(key);
        Slot *s = slots();
        uint64_t c = s[i].count;
        if (c == 0) return 0;
        if (n >= c) {
            remove_at(i);
            return c;
        }
        __atomic_store_n(&s[i].count, c - n, __ATOMIC_RELAXED);
        return n;
    }

    // Counter of key, 0 when absent.
    uint64_t get(const Key &key) const { return slots()[probe(key)].count; }

    // One bounded step of the clock: while more than target keys are
    // present, the hand visits at most max_visits slots; a key with usage
    // left loses one, a key at zero for which evictable(key) holds is removed
    // and handed to on_evict(key, count). Returns the number of keys evicted.
    // Work is O(max_visits) whatever the table's size, so a caller with a
    // deadline (the sampler's tick) can run it every time.
    template <typename Evictable, typename OnEvict>
    uint64_t evict(uint64_t target, uint64_t max_visits, Evictable &&evictable, OnEvict &&on_evict) {
        Slot *s = slots();
        const uint64_t mask = header_->slots - 1;
        uint64_t i = header_->hand & mask;
        uint64_t n = 0;
        // At most one turn of the hand per step: more would take a key's
        // usage down several times before anything could use it again.
        if (max_visits > header_->slots) max_visits = header_->slots;
        for (uint64_t v = 0; v < max_visits && header_->used > target; v++) {
            Slot &slot = s[i];
            if (slot.count != 0) {
                if (slot.usage > 0) {
                    slot.usage--;
                } else if (evictable(static_cast<const Key &>(slot.key))) {
                    Key k = slot.key;
                    uint64_t c = slot.count;
                    remove_at(i);
                    n++;
                    on_evict(static_cast<const Key &>(k), c);
                    continue;  // a later entry may have moved into slot i: look at it again
                }
            }
            i = (i + 1) & mask;
        }
        header_->hand = i;
        if (n) __atomic_store_n(&header_->evicted, header_->evicted + n, __ATOMIC_RELAXED);
        return n;
    }
    template <typename OnEvict>
    uint64_t evict(uint64_t target, uint64_t max_visits, OnEvict &&on_evict) {
        return evict(target, max_visits, [](const Key &) { return true; }, on_evict);
    }

    // visit(const Key&, uint64_t count) for each present key, slot order.
    template <typename Visit>
    void for_each(Visit &&visit) const {
        const Slot *s = slots();
        for (uint64_t i = 0; i < header_->slots; i++)
            if (s[i].count != 0) visit(s[i].key, s[i].count);
    }

    // Raw slot array, for copying the table as one block.
    const Slot *slot_array() const { return slots(); }

    // Whether a table loaded as raw memory is one this class could have
    // written for `limit` keys: its size fields, its used count, usages in
    // range, and every key where a lookup finds it (else adds would count it
    // twice). *total is the sum of its counts. Reads every slot once.
    bool intact(uint64_t limit, uint64_t *total) const {
        if (header_->limit != limit || header_->slots != slots_for(limit) || header_->hand >= header_->slots)
            return false;
        const Slot *s = slots();
        uint64_t used = 0, sum = 0;
        for (uint64_t i = 0; i < header_->slots; i++) {
            if (s[i].count == 0) continue;
            if (s[i].usage > kMaxUsage || probe(s[i].key) != i || __builtin_add_overflow(sum, s[i].count, &sum))
                return false;
            used++;
        }
        *total = sum;
        return used == header_->used && used <= limit;
    }

private:
    // The slot holding key, else the empty slot that ends its probe run
    // (the table always keeps empty slots: limit < slots).
    uint64_t probe(const Key &key) const {
        const uint64_t mask = header_->slots - 1;
        uint64_t i = hash_bytes(&key, sizeof(Key)) & mask;
        const Slot *s = slots();
        while (s[i].count != 0 && std::memcmp(&s[i].key, &key, sizeof(Key)) != 0) i = (i + 1) & mask;
        return i;
    }

    static uint32_t usage_after(uint32_t usage, uint64_t n) {
        uint64_t u = usage + (n < kMaxUsage ? n : kMaxUsage);
        return static_cast<uint32_t>(u < kMaxUsage ? u : kMaxUsage);
    }

    // Removes the key in slot i and shifts later keys of its probe run back
    // into the hole (linear probing's deletion without tombstones): a key
    // moves to the hole when the hole lies on its way from its home slot.
    void remove_at(uint64_t i) {
        Slot *s = slots();
        const uint64_t mask = header_->slots - 1;
        uint64_t hole = i;
        uint64_t j = i;
        for (;;) {
            j = (j + 1) & mask;
            if (s[j].count == 0) break;
            uint64_t home = hash_bytes(&s[j].key, sizeof(Key)) & mask;
            // Distance from home to j versus home to hole (cyclic): the key
            // may move back only if the hole is not past its home.
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                s[hole] = s[j];
                hole = j;
            }
        }
        std::memset(static_cast<void *>(&s[hole]), 0, sizeof(Slot));
        header_->used--;
    }

    Slot *slots() const { return reinterpret_cast<Slot *>(reinterpret_cast<char *>(header_) + sizeof(Header)); }
    Header *header_ = nullptr;
};

}  // namespace psw
