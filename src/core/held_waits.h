// Waits a client's message spends before its statement begins,
// PostgreSQL-free (exact timing, src/pg/timing/statement_timing.cpp).
//
// Parse analysis takes its tables' locks before the hook that begins the
// statement, and a Bind takes its cached plan's locks before the Execute
// that begins it, so the wait that blocks a statement behind another
// session's lock comes before the statement is known. Such waits are held
// here, each as it was (its event and length, so the event's histogram and
// maximum stay exact), with the start of the first and a key for the text
// being run. When a statement of the same text begins they become its own;
// otherwise they count as waits outside any statement.
//
// Backend-local, fixed size, no allocation: a wait past kMax is not held
// (the caller counts it outside any statement at once).
#pragma once

#include <cstdint>

namespace psw {

class HeldWaits {
public:
    static constexpr int kMax = 32;

    bool empty() const { return n_ == 0; }
    int count() const { return n_; }
    // When the first held wait began (meaningless when empty).
    int64_t start_ns() const { return start_ns_; }
    // What the held waits were run for (the caller's hash of the text).
    uint64_t key() const { return key_; }

    // Holds one wait of event idx, begun at t0 and lasting ns, for the text
    // keyed `key`; the first one sets start and key. False when full.
    bool hold(uint64_t key, uint16_t idx, int64_t t0, uint64_t ns) {
        if (n_ == kMax) return false;
        if (n_ == 0) {
            start_ns_ = t0;
            key_ = key;
        }
        waits_[n_++] = Wait{idx, ns};
        return true;
    }

    // Hands every held wait to f(idx, ns), oldest first, and forgets them.
    template <typename F>
    void drain(F &&f) {
        for (int i = 0; i < n_; i++) f(waits_[i].idx, waits_[i].ns);
        n_ = 0;
    }

private:
    struct Wait {
        uint16_t idx;
        uint64_t ns;
    };
    int n_ = 0;
    int64_t start_ns_ = 0;
    uint64_t key_ = 0;
    Wait waits_[kMax] = {};
};

// The key of a statement's text: 64-bit FNV-1a over its bytes. Only a
// message that waited before its statement began pays for it, twice.
inline uint64_t held_text_key(const char *text) {
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = reinterpret_cast<const unsigned char *>(text); *p != 0; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

}  // namespace psw
