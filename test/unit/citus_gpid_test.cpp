// Citus's global pid from an application_name (src/core/citus_gpid.h).
#include <gtest/gtest.h>

#include <cstring>

#include "../../src/core/citus_gpid.h"

using psw::citus_gpid_from_appname;

static int64_t parse(const char *s) { return citus_gpid_from_appname(s, std::strlen(s)); }

TEST(CitusGpid, ThreePrefixes) {
    EXPECT_EQ(parse("citus_internal gpid=10000006179"), 10000006179LL);
    EXPECT_EQ(parse("citus_rebalancer gpid=20000000042"), 20000000042LL);
    EXPECT_EQ(parse("citus_run_command gpid=30000012345"), 30000012345LL);
}

TEST(CitusGpid, OtherNamesAreNone) {
    EXPECT_EQ(parse(""), 0);
    EXPECT_EQ(parse("psql"), 0);
    EXPECT_EQ(parse("citus"), 0);
    EXPECT_EQ(parse("citus_internal"), 0);
    EXPECT_EQ(parse("citus_internal gpid="), 0);
    EXPECT_EQ(parse("citus_internal gpid=abc"), 0);
    EXPECT_EQ(parse("Citus_internal gpid=1"), 0);
    EXPECT_EQ(parse("xcitus_internal gpid=1"), 0);
    EXPECT_EQ(parse("citus_internal_gpid=1"), 0);
    EXPECT_EQ(parse("citus_other gpid=1"), 0);
}

TEST(CitusGpid, DigitsUpToTheFirstOther) {
    // As Citus reads it (strtoul): what follows the digits is ignored.
    EXPECT_EQ(parse("citus_internal gpid=123 extra"), 123);
    EXPECT_EQ(parse("citus_internal gpid=99999999x"), 99999999);
}

TEST(CitusGpid, LengthBoundsTheRead) {
    const char name[] = "citus_internal gpid=1234567";
    EXPECT_EQ(citus_gpid_from_appname(name, 22), 12);
    EXPECT_EQ(citus_gpid_from_appname(name, 20), 0);
    EXPECT_EQ(citus_gpid_from_appname(name, 5), 0);
    // A buffer without a NUL inside len: never read past it.
    char raw[24];
    std::memcpy(raw, "citus_internal gpid=987", 23);
    raw[23] = '9';
    EXPECT_EQ(citus_gpid_from_appname(raw, 23), 987);
}

TEST(CitusGpid, OverflowIsNone) {
    EXPECT_EQ(parse("citus_internal gpid=9223372036854775807"), 9223372036854775807LL);
    EXPECT_EQ(parse("citus_internal gpid=9223372036854775808"), 0);
    EXPECT_EQ(parse("citus_internal gpid=99999999999999999999999"), 0);
}
