#include "fixed_hash.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace {

struct Key {
    uint64_t a;
    uint32_t b;
    uint32_t c;
};

struct Table {
    std::vector<char> mem;
    psw::FixedHashTable<Key> t;
    explicit Table(uint64_t limit) : mem(psw::FixedHashTable<Key>::bytes(limit)), t(mem.data()) { t.init(limit); }
};

Key key(uint64_t a, uint32_t b = 0) {
    Key k{};
    k.a = a;
    k.b = b;
    return k;
}

// hash_bytes goes eight bytes at a time, then bytewise: every byte of a key,
// tail included, must change the hash, and sequential keys must spread over
// the low bits that a power-of-two table uses.
TEST(FixedHash, HashUsesEveryByteAndSpreadsLowBits) {
    unsigned char buf[13] = {};
    uint64_t base = psw::hash_bytes(buf, sizeof(buf));
    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] = 1;
        EXPECT_NE(psw::hash_bytes(buf, sizeof(buf)), base) << "byte " << i;
        buf[i] = 0;
    }
    std::vector<int> buckets(64, 0);
    for (uint64_t q = 0; q < 64 * 64; q++) {
        Key k = key(q);
        buckets[psw::hash_bytes(&k, sizeof(k)) & 63]++;
    }
    for (int n : buckets) {
        EXPECT_GT(n, 32);
        EXPECT_LT(n, 96);
    }
}

TEST(FixedHash, CountsMatchAReferenceMap) {
    Table tab(2000);
    std::map<std::pair<uint64_t, uint32_t>, uint64_t> ref;
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; i++) {
        uint64_t a = rng() % 500;
        uint32_t b = static_cast<uint32_t>(rng() % 3);
        ASSERT_TRUE(tab.t.add(key(a, b), 2));
        ref[{a, b}] += 2;
    }
    EXPECT_EQ(tab.t.used(), ref.size());
    for (const auto &kv : ref) EXPECT_EQ(tab.t.get(key(kv.first.first, kv.first.second)), kv.second);
    uint64_t sum = 0, n = 0;
    tab.t.for_each([&](const Key &, uint64_t c) {
        sum += c;
        n++;
    });
    EXPECT_EQ(sum, 40000u);
    EXPECT_EQ(n, ref.size());
}

TEST(FixedHash, RefusesNewKeysAtTheLimitButCountsExistingOnes) {
    Table tab(100);
    for (uint64_t i = 0; i < 100; i++) ASSERT_TRUE(tab.t.add(key(i), 1));
    EXPECT_FALSE(tab.t.add(key(1000), 1));
    EXPECT_EQ(tab.t.get(key(1000)), 0u);
    EXPECT_TRUE(tab.t.add(key(5), 3));
    EXPECT_EQ(tab.t.get(key(5)), 4u);
    EXPECT_EQ(tab.t.used(), 100u);
}

TEST(FixedHash, KeyLimitBelowTableLimit) {
    Table tab(10);
    for (uint64_t i = 0; i < 8; i++) ASSERT_TRUE(tab.t.add(key(i), 1, 8));
    EXPECT_FALSE(tab.t.add(key(8), 1, 8));
    EXPECT_TRUE(tab.t.add(key(8), 1, 10));
}

TEST(FixedHash, ClearEmptiesIt) {
    Table tab(10);
    tab.t.add(key(1), 1);
    tab.t.clear();
    EXPECT_EQ(tab.t.used(), 0u);
    EXPECT_EQ(tab.t.get(key(1)), 0u);
    EXPECT_TRUE(tab.t.add(key(2), 1));
}

}  // namespace

namespace {

// take() moves counts out of a key (the sampler re-attributing samples):
// never below zero, and a key taken to zero is gone without breaking the
// probe runs of the keys around it.
TEST(FixedHash, TakeDecrementsAndRemovesAtZero) {
    Table t(64);
    for (uint64_t a = 0; a < 40; a++) ASSERT_TRUE(t.t.add(key(a), a + 1));
    EXPECT_EQ(t.t.take(key(10), 5), 5u);
    EXPECT_EQ(t.t.get(key(10)), 6u);
    EXPECT_EQ(t.t.take(key(10), 100), 6u);
    EXPECT_EQ(t.t.get(key(10)), 0u);
    EXPECT_EQ(t.t.used(), 39u);
    EXPECT_EQ(t.t.take(key(999), 1), 0u);
    for (uint64_t a = 0; a < 40; a++) {
        if (a == 10) continue;
        EXPECT_EQ(t.t.get(key(a)), a + 1) << a;
    }
}

// Random adds and eviction steps against a reference map: every key still
// present is found with its exact count (deletion kept the probe runs
// intact), the table never holds more than its limit, and every key ever
// added is either present or counted as evicted.
TEST(FixedHashEviction, StepsKeepLookupsExactAndCountEvictions) {
    Table t(200);
    std::map<uint64_t, uint64_t> ref;
    std::mt19937_64 rng(7);
    uint64_t evicted_total = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 30; i++) {
            uint64_t a = rng() % 3000;
            uint64_t n = 1 + rng() % 3;
            if (t.t.add(key(a), n)) ref[a] += n;
        }
        evicted_total += t.t.evict(150, 64, [&](const Key &k, uint64_t c) {
            auto it = ref.find(k.a);
            ASSERT_NE(it, ref.end());
            EXPECT_EQ(it->second, c);
            ref.erase(it);
        });
        ASSERT_LE(t.t.used(), 200u);
        ASSERT_EQ(t.t.used(), ref.size());
        for (const auto &kv : ref) ASSERT_EQ(t.t.get(key(kv.first)), kv.second) << kv.first;
    }
    EXPECT_GT(evicted_total, 1000u);
    EXPECT_EQ(t.t.evicted(), evicted_total);
    t.t.clear();
    EXPECT_EQ(t.t.evicted(), 0u);
}

// A stream of ever-new keys, five times the limit, with one eviction step
// per "tick": the newest keys are present, the heavy key used every tick
// survives, and nothing is refused.
TEST(FixedHashEviction, NewestAndHeavyKeysSurviveAStreamOfNewKeys) {
    const uint64_t limit = 100;
    Table t(limit);
    uint64_t refused = 0;
    for (uint64_t q = 1; q <= 5 * limit; q++) {
        if (!t.t.add(key(q), 1)) refused++;
        t.t.add(key(999999), 5);                                      // heavy, every tick
        t.t.evict(limit * 9 / 10, 64, [](const Key &, uint64_t) {});  // the sampler's bounded step
    }
    EXPECT_EQ(refused, 0u);
    for (uint64_t q = 5 * limit - 10; q <= 5 * limit; q++) EXPECT_EQ(t.t.get(key(q)), 1u) << q;
    EXPECT_EQ(t.t.get(key(999999)), 5 * 5 * limit);
    EXPECT_GE(t.t.evicted(), 5 * limit - limit);
}

// Evictable() keeps some keys out of reach (the minute buckets' "other"
// rows are never evicted).
TEST(FixedHashEviction, RespectsEvictablePredicate) {
    Table t(64);
    for (uint64_t q = 1; q <= 64; q++) t.t.add(key(q, q % 2), 1);
    for (int i = 0; i < 50; i++)
        t.t.evict(0, 1000, [](const Key &k) { return k.b == 0; }, [](const Key &, uint64_t) {});
    EXPECT_EQ(t.t.used(), 32u);
    t.t.for_each([](const Key &k, uint64_t) { EXPECT_EQ(k.b, 1u); });
}

}  // namespace
