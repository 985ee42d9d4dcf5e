// Patches this test program's own GOT (linked -z relro -z now, like Debian's
// postgres) and checks that its calls reach the wrapper, the real function
// still runs, errno survives, RELRO is restored and nothing is patched twice.
#include "got_patch.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

int (*real_fdatasync)(int) = nullptr;
int wrapper_calls = 0;

int counting_fdatasync(int fd) {
    wrapper_calls++;
    return real_fdatasync(fd);
}

// Permissions ("r--p"...) of the mapping holding address a.
std::string perms_of(const void *a) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    uintptr_t x = reinterpret_cast<uintptr_t>(a);
    while (std::getline(maps, line)) {
        unsigned long lo, hi;
        char perms[8];
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && x >= lo && x < hi) return perms;
    }
    return "";
}

// Scans raw memory of the executable's mappings, redzones included: not a
// bug for AddressSanitizer to report.
__attribute__((no_sanitize("address"))) void *got_slot_of_fdatasync() {
    // The slot is whatever holds our wrapper inside the program's writable
    // or RELRO data; find it by scanning the mappings of the executable.
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long lo, hi;
        char perms[8];
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
        if (perms[0] != 'r' || line.find("psw_unit_tests") == std::string::npos) continue;
        for (unsigned long p = lo; p + sizeof(void *) <= hi; p += sizeof(void *))
            if (*reinterpret_cast<void **>(p) == reinterpret_cast<void *>(&counting_fdatasync))
                return reinterpret_cast<void *>(p);
    }
    return nullptr;
}

TEST(GotPatch, RedirectsOwnCallsAndKeepsTheOriginal) {
    psw::GotPatch p[2] = {
        {"fdatasync", reinterpret_cast<void *>(&counting_fdatasync), reinterpret_cast<void **>(&real_fdatasync), false},
        {"psw_no_such_import", reinterpret_cast<void *>(&counting_fdatasync), nullptr, false},
    };
    std::string error;
    ASSERT_EQ(psw::got_patch_main_program(p, 2, &error), 1) << error;
    EXPECT_TRUE(p[0].patched);
    EXPECT_FALSE(p[1].patched);
    ASSERT_NE(real_fdatasync, nullptr);
    EXPECT_NE(real_fdatasync, &counting_fdatasync);

    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(fdatasync(fileno(f)), 0);
    EXPECT_EQ(wrapper_calls, 1);
    errno = 0;
    EXPECT_EQ(fdatasync(-1), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(wrapper_calls, 2);
    std::fclose(f);

    // RELRO is read-only again after the write.
    void *slot = got_slot_of_fdatasync();
    ASSERT_NE(slot, nullptr);
    EXPECT_EQ(perms_of(slot).substr(0, 2), "r-") << "GOT page left writable";

    // A second pass finds the wrapper in place and changes nothing.
    auto before = real_fdatasync;
    ASSERT_EQ(psw::got_patch_main_program(p, 1, &error), 1) << error;
    EXPECT_EQ(real_fdatasync, before);
    EXPECT_EQ(fdatasync(-1), -1);
    EXPECT_EQ(wrapper_calls, 3);  // once per call: not wrapped twice
}

}  // namespace
