// Rewrites entries of the main program's global offset table (ELF, x86_64
// R_X86_64_JUMP_SLOT relocations of DT_JMPREL), PostgreSQL-free.
//
// Why the main program only: every wait PostgreSQL reports brackets a
// blocking C library call made from the `postgres` executable; redirecting
// its own GOT entries at preload time (in the postmaster, before any fork)
// gives every child process the wrappers, without touching libc or any other
// library. Calls made from other libraries are not seen, by design.
#pragma once

#include <string>

namespace psw {

struct GotPatch {
    const char *name;   // symbol the program imports, e.g. "pread"
    void *replacement;  // the wrapper
    void **original;    // receives the function the program called before
    bool patched;       // out
};

// Patches every listed symbol found among the main program's JUMP_SLOT
// relocations. *original is the bound GOT value when the program was linked
// with BIND_NOW, else dlsym(RTLD_DEFAULT, name); it is never the wrapper.
// A slot that already holds its replacement is left alone (never twice).
// RELRO pages are made writable for the write and read-only again.
// Returns the number patched; *error says why none could be (non-ELF,
// static binary, no dynamic section...).
int got_patch_main_program(GotPatch *patches, int n, std::string *error);

}  // namespace psw
