#include "stat_file.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

TEST(StatFile, RoundTripsSections) {
    psw::StatFileWriter w;
    w.section("profile", 1, "abc", 3);
    w.section("minutes", 2, "", 0);
    std::string file = w.finish();
    std::vector<psw::StatSection> s;
    std::string err;
    ASSERT_TRUE(psw::parse_stat_file(file, &s, &err)) << err;
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].tag, "profile");
    EXPECT_EQ(s[0].version, 1u);
    EXPECT_EQ(std::string(s[0].data, s[0].len), "abc");
    EXPECT_EQ(s[1].tag, "minutes");
    EXPECT_EQ(s[1].version, 2u);
    EXPECT_EQ(s[1].len, 0u);
}

TEST(StatFile, RejectsTruncatedAndForeignFiles) {
    psw::StatFileWriter w;
    w.section("profile", 1, "abcdef", 6);
    std::string file = w.finish();
    std::vector<psw::StatSection> s;
    std::string err;
    for (size_t cut = 0; cut < file.size(); cut++)
        EXPECT_FALSE(psw::parse_stat_file(file.substr(0, cut), &s, &err)) << "cut at " << cut;
    EXPECT_FALSE(psw::parse_stat_file("hello world, not a stat file", &s, &err));
    std::string other = file;
    other[8] = 9;  // format version
    EXPECT_FALSE(psw::parse_stat_file(other, &s, &err));
    EXPECT_NE(err.find("version"), std::string::npos);
}

}  // namespace

namespace {

// Files of format 1 (before exact timing was keyed by backend type) are
// refused as a whole: the server logs it and starts empty.
TEST(StatFile, RefusesFormatOneFiles) {
    psw::StatFileWriter w;
    w.section("profile", 1, "x", 1);
    std::string file = w.finish();
    uint32_t one = 1;
    std::memcpy(&file[8], &one, sizeof(one));
    std::vector<psw::StatSection> s;
    std::string err;
    EXPECT_FALSE(psw::parse_stat_file(file, &s, &err));
    EXPECT_NE(err.find("version 1 is not supported"), std::string::npos) << err;
}

}  // namespace
