// The GOT patch on a lazily bound program with partial RELRO, as
// PostgreSQL built from source is (Debian's packages are BIND_NOW with full
// RELRO: got_patch_test.cpp). This program is linked with -z lazy: a slot
// whose function was never called still holds the address of the PLT's
// resolver stub. If that stub were kept as "the original", the first call
// through the wrapper would run the resolver, which writes the real
// function into the slot and silently removes the wrapper; got_patch takes
// the original from dlsym instead. The tests fail if either goes wrong.
#include "got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

extern ElfW(Dyn) _DYNAMIC[];

namespace {

int (*real_fsync)(int) = nullptr;
int fsync_calls = 0;
int counting_fsync(int fd) {
    fsync_calls++;
    return real_fsync(fd);
}

int (*real_ftruncate)(int, off_t) = nullptr;
int ftruncate_calls = 0;
int counting_ftruncate(int fd, off_t len) {
    ftruncate_calls++;
    return real_ftruncate(fd, len);
}

bool program_binds_now() {
    for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_BIND_NOW) return true;
        if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_BIND_NOW)) return true;
        if (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_NOW)) return true;
    }
    return false;
}

TEST(GotPatchLazy, ProgramIsLazilyBound) {
    // Otherwise this program would not test what it is for.
    EXPECT_FALSE(program_binds_now());
}

TEST(GotPatchLazy, NeverCalledImportKeepsItsWrapperAcrossCalls) {
    // fsync has not been called yet: its slot points at the PLT stub.
    psw::GotPatch p[1] = {
        {"fsync", reinterpret_cast<void *>(&counting_fsync), reinterpret_cast<void **>(&real_fsync), false}};
    std::string error;
    ASSERT_EQ(psw::got_patch_main_program(p, 1, &error), 1) << error;
    ASSERT_NE(real_fsync, nullptr);
    // The original is libc's function, not this program's PLT stub.
    Dl_info info{};
    ASSERT_NE(dladdr(reinterpret_cast<void *>(real_fsync), &info), 0);
    EXPECT_NE(std::string(info.dli_fname).find("libc"), std::string::npos) << info.dli_fname;

    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(fsync(fileno(f)), 0);
    EXPECT_EQ(fsync(fileno(f)), 0);  // still wrapped after the first call
    errno = 0;
    EXPECT_EQ(fsync(-1), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(fsync_calls, 3);
    std::fclose(f);
}

TEST(GotPatchLazy, AlreadyResolvedImportIsPatchedAndOthersStillResolve) {
    FILE *f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(ftruncate(fileno(f), 0), 0);  // resolves the slot lazily now
    psw::GotPatch p[1] = {{"ftruncate", reinterpret_cast<void *>(&counting_ftruncate),
                           reinterpret_cast<void **>(&real_ftruncate), false}};
    std::string error;
    ASSERT_EQ(psw::got_patch_main_program(p, 1, &error), 1) << error;
    EXPECT_EQ(ftruncate(fileno(f), 4096), 0);
    EXPECT_EQ(ftruncate_calls, 1);
    // The lazily bound part of the GOT is left writable: the resolver can
    // still bind an import first called after the patch.
    EXPECT_GT(getppid(), 0);
    std::fclose(f);
}

}  // namespace
