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
