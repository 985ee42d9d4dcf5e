#include "stat_file.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

// CRC-32C, bitwise (the server hands in PostgreSQL's pg_comp_crc32c).
uint32_t crc32c_step(uint32_t crc, const void *data, size_t len) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return crc;
}

TEST(StatFile, TestCrcIsCrc32c) {
    // The check value of CRC-32C (Castagnoli).
    EXPECT_EQ(crc32c_step(0xFFFFFFFFu, "123456789", 9) ^ 0xFFFFFFFFu, 0xE3069283u);
}

std::string two_sections() {
    psw::StatFileWriter w(crc32c_step);
    w.section("profile", 1, "abcdef", 6);
    w.section("minutes", 2, "", 0);
    return w.finish();
}

TEST(StatFile, RoundTripsSections) {
    std::string file = two_sections();
    psw::StatFileInfo info;
    std::string err;
    ASSERT_TRUE(psw::parse_stat_file(file, crc32c_step, &info, &err)) << err;
    EXPECT_EQ(info.format, psw::kStatFileVersion);
    const std::vector<psw::StatSection> &s = info.sections;
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].tag, "profile");
    EXPECT_EQ(s[0].version, 1u);
    EXPECT_EQ(std::string(s[0].data, s[0].len), "abcdef");
    EXPECT_TRUE(s[0].checked && s[0].intact);
    EXPECT_EQ(s[1].tag, "minutes");
    EXPECT_EQ(s[1].version, 2u);
    EXPECT_EQ(s[1].len, 0u);
    EXPECT_TRUE(s[1].checked && s[1].intact);
}

TEST(StatFile, RejectsTruncatedAndForeignFiles) {
    std::string file = two_sections();
    psw::StatFileInfo info;
    std::string err;
    for (size_t cut = 0; cut < file.size(); cut++)
        EXPECT_FALSE(psw::parse_stat_file(file.substr(0, cut), crc32c_step, &info, &err)) << "cut at " << cut;
    EXPECT_FALSE(psw::parse_stat_file("", crc32c_step, &info, &err));
    EXPECT_EQ(err, "the file is empty");
    EXPECT_FALSE(psw::parse_stat_file("hello world, not a stat file", crc32c_step, &info, &err));
    EXPECT_EQ(err, "not a pg_stat_waits statistics file");
    std::string other = file;
    other[8] = 9;  // format version
    EXPECT_FALSE(psw::parse_stat_file(other, crc32c_step, &info, &err));
    EXPECT_NE(err.find("version"), std::string::npos);
}

// Every single flipped bit of the file is caught: in the file header or the
// trailer the whole file is refused, in a section that section (and only
// that one) is marked damaged, or a changed length breaks the layout.
TEST(StatFile, EveryFlippedBitIsCaught) {
    const std::string file = two_sections();
    const size_t first = 16, second = first + 24 + 6, trailer = second + 24;
    for (size_t byte = 0; byte < file.size(); byte++) {
        for (int bit = 0; bit < 8; bit++) {
            std::string bad = file;
            bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
            psw::StatFileInfo info;
            std::string err;
            bool parsed = psw::parse_stat_file(bad, crc32c_step, &info, &err);
            if (!parsed) continue;  // refused as a whole
            ASSERT_TRUE(byte >= first && byte < trailer) << "byte " << byte << " bit " << bit;
            ASSERT_EQ(info.sections.size(), 2u);
            const size_t damaged = byte < second ? 0 : 1;
            EXPECT_FALSE(info.sections[damaged].intact) << "byte " << byte << " bit " << bit;
            EXPECT_TRUE(info.sections[1 - damaged].intact) << "byte " << byte << " bit " << bit;
        }
    }
}

// Files of format 1 (before exact timing was keyed by backend type) are
// refused as a whole: the server logs it and starts empty.
TEST(StatFile, RefusesFormatOneFiles) {
    std::string file = two_sections();
    uint32_t one = 1;
    std::memcpy(&file[8], &one, sizeof(one));
    psw::StatFileInfo info;
    std::string err;
    EXPECT_FALSE(psw::parse_stat_file(file, crc32c_step, &info, &err));
    EXPECT_NE(err.find("version 1 is not supported"), std::string::npos) << err;
}

// A file of format 2 (no CRCs: zeros where they are now) is read with its
// sections unchecked, so statistics saved by the previous build survive the
// upgrade.
TEST(StatFile, ReadsFormatTwoUnchecked) {
    std::string file = two_sections();
    uint32_t two = psw::kStatFileUncheckedVersion, zero = 0;
    std::memcpy(&file[8], &two, sizeof(two));
    std::memcpy(&file[16 + 12], &zero, sizeof(zero));
    std::memcpy(&file[16 + 24 + 6 + 12], &zero, sizeof(zero));
    psw::StatFileInfo info;
    std::string err;
    ASSERT_TRUE(psw::parse_stat_file(file, crc32c_step, &info, &err)) << err;
    EXPECT_EQ(info.format, 2u);
    ASSERT_EQ(info.sections.size(), 2u);
    for (const psw::StatSection &s : info.sections) EXPECT_TRUE(!s.checked && s.intact);
    EXPECT_EQ(std::string(info.sections[0].data, info.sections[0].len), "abcdef");
}

}  // namespace
