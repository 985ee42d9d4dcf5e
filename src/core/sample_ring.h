// Fixed-capacity ring of samples with one writer and lock-free readers.
//
// Why per-entry sequences: readers of a 1,000,000-sample history copy
// megabytes; they must never make the writer (the sampler) wait, and never
// wait for each other. Each entry carries the sequence of the position it
// holds (2p+1 while being written, 2p+2 once written). A reader copies the
// entry, then checks that the sequence still names the position it wanted;
// an entry overwritten meanwhile is skipped (it has become newer data), so a
// reader sees every surviving sample exactly once, oldest first.
//
// Reset is a single store of the "floor" (the first position readers may
// return), done by whoever holds the writer role; nothing is cleared.
// PostgreSQL-free so it can be unit-tested; lives in shared memory as raw
// bytes: bytes() sizes them, init() lays them out, the constructor wraps them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace psw {

// Tells the CPU this thread spins (lets a sibling hyperthread, or the
// writer the line bounces to, get on).
inline void ring_spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

template <typename T>
class SampleRing {
    static_assert(std::is_trivially_copyable<T>::value, "shared memory holds trivially copyable data");

public:
    struct Header {
        uint64_t capacity;
        uint64_t head;   // next position to write (monotonic, never wraps)
        uint64_t floor;  // first position readers may return (reset)
        uint64_t pad;
    };
    struct Entry {
        uint64_t seq;
        T data;
    };

    static size_t bytes(uint64_t capacity) { return sizeof(Header) + capacity * sizeof(Entry); }

    SampleRing() = default;
    explicit SampleRing(void *mem) : header_(static_cast<Header *>(mem)) {}

    void init(uint64_t capacity) {
        std::memset(static_cast<void *>(header_), 0, bytes(capacity));
        header_->capacity = capacity;
    }

    uint64_t capacity() const { return header_->capacity; }
    uint64_t head() const { return __atomic_load_n(&header_->head, __ATOMIC_ACQUIRE); }
    uint64_t floor() const { return __atomic_load_n(&header_->floor, __ATOMIC_ACQUIRE); }

    // Number of samples readers can currently see.
    uint64_t used() const {
        uint64_t h = head(), f = floor();
        uint64_t first = h > capacity() ? h - capacity() : 0;
        if (f > first) first = f;
        return h - first;
    }

    // Writer side (one writer at a time).
    void push(const T &value) {
        uint64_t p = __atomic_load_n(&header_->head, __ATOMIC_RELAXED);
        Entry &e = entries()[p % header_->capacity];
        __atomic_store_n(&e.seq, 2 * p + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        std::memcpy(static_cast<void *>(&e.data), &value, sizeof(T));
        __atomic_store_n(&e.seq, 2 * p + 2, __ATOMIC_RELEASE);
        __atomic_store_n(&header_->head, p + 1, __ATOMIC_RELEASE);
    }
    // Hides everything written so far from readers.
    void reset() { __atomic_store_n(&header_->floor, head(), __ATOMIC_RELEASE); }

    // Writer side: lets edit(T&) change the sample at position pos in place
    // if it is still present (edit returns whether it changed anything).
    // Readers that meet the entry meanwhile wait for the edit to finish (a
    // few stores) rather than skip it. False when pos is gone or unchanged.
    template <typename Edit>
    bool rewrite(uint64_t pos, Edit &&edit) {
        uint64_t h = __atomic_load_n(&header_->head, __ATOMIC_RELAXED);
        uint64_t cap = header_->capacity;
        if (pos >= h || h - pos > cap || pos < floor()) return false;
        Entry &e = entries()[pos % cap];
        if (__atomic_load_n(&e.seq, __ATOMIC_RELAXED) != 2 * pos + 2) return false;
        T copy;
        std::memcpy(static_cast<void *>(&copy), &e.data, sizeof(T));
        if (!edit(copy)) return false;
        __atomic_store_n(&e.seq, 2 * pos + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        std::memcpy(static_cast<void *>(&e.data), &copy, sizeof(T));
        __atomic_store_n(&e.seq, 2 * pos + 2, __ATOMIC_RELEASE);
        return true;
    }

    // Reader side: calls visit(const T&) for each sample still present,
    // oldest first. Returns how many entries were skipped because the writer
    // overwrote them during the read.
    template <typename Visit>
    uint64_t read(Visit &&visit) const {
        return scan([&](const T &v) {
            visit(v);
            return true;
        });
    }

    // The oldest sample still present (false when none).
    bool oldest(T *out) const {
        bool found = false;
        read_until([&](const T &v) {
            *out = v;
            found = true;
            return false;
        });
        return found;
    }

    // Like read(), but stops as soon as visit returns false.
    template <typename Visit>
    void read_until(Visit &&visit) const {
        scan(visit);
    }

private:
    // Copies each entry between the floor (or the oldest surviving one) and
    // head, keeps it only if its sequence shows it was not overwritten while
    // copied, and hands it to visit until visit returns false. Returns the
    // number of entries skipped as overwritten.
    template <typename Visit>
    uint64_t scan(Visit &&visit) const {
        uint64_t h = head();
        uint64_t cap = header_->capacity;
        uint64_t start = h > cap ? h - cap : 0;
        uint64_t f = floor();
        if (f > start) start = f;
        uint64_t skipped = 0;
        T copy;
        for (uint64_t p = start; p < h; p++) {
            const Entry &e = entries()[p % cap];
            const uint64_t want = 2 * p + 2;
            // 2p+1 below head is an in-place rewrite (rewrite()), not a newer
            // sample: copy again once it is done (a few stores). Bounded, a
            // few milliseconds at most: a writer descheduled mid-rewrite
            // costs one skipped sample, never a hung reader.
            bool copied = false;
            for (int attempt = 0; attempt < 100000 && !copied; attempt++) {
                uint64_t seq = __atomic_load_n(&e.seq, __ATOMIC_ACQUIRE);
                if (seq == want - 1) {
                    ring_spin_pause();
                    continue;
                }
                if (seq != want) break;
                std::memcpy(static_cast<void *>(&copy), &e.data, sizeof(T));
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                seq = __atomic_load_n(&e.seq, __ATOMIC_RELAXED);
                if (seq == want) copied = true;
                else if (seq != want - 1) break;
            }
            if (!copied) {
                skipped++;
                continue;
            }
            if (!visit(static_cast<const T &>(copy))) break;
        }
        return skipped;
    }

    Entry *entries() const { return reinterpret_cast<Entry *>(reinterpret_cast<char *>(header_) + sizeof(Header)); }
    Header *header_ = nullptr;
};

}  // namespace psw
