#include "got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace psw {
namespace {

struct MainProgram {
    ElfW(Addr) base;
    const ElfW(Phdr) *phdr;
    ElfW(Half) phnum;
    bool found;
};

// dl_iterate_phdr lists the main program first.
int first_object(struct dl_phdr_info *info, size_t, void *data) {
    MainProgram *m = static_cast<MainProgram *>(data);
    m->base = info->dlpi_addr;
    m->phdr = info->dlpi_phdr;
    m->phnum = info->dlpi_phnum;
    m->found = true;
    return 1;
}

}  // namespace

int got_patch_main_program(GotPatch *patches, int n, std::string *error) {
    for (int i = 0; i < n; i++) patches[i].patched = false;
#if !defined(__x86_64__)
    *error = "global offset table patching is implemented for x86_64 only";
    return 0;
#else
    MainProgram m{};
    dl_iterate_phdr(first_object, &m);
    if (!m.found || m.phdr == nullptr) {
        *error = "main program not found by dl_iterate_phdr";
        return 0;
    }
    const ElfW(Dyn) *dyn = nullptr;
    ElfW(Addr) relro_start = 0, relro_end = 0;
    for (ElfW(Half) i = 0; i < m.phnum; i++) {
        const ElfW(Phdr) &ph = m.phdr[i];
        if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn) *>(m.base + ph.p_vaddr);
        if (ph.p_type == PT_GNU_RELRO) {
            relro_start = m.base + ph.p_vaddr;
            relro_end = relro_start + ph.p_memsz;
        }
    }
    if (dyn == nullptr) {
        *error = "the main program has no dynamic section (statically linked?)";
        return 0;
    }
    // glibc relocates the address entries of the main program's dynamic
    // section in place; unrelocated ones are offsets from the load base.
    auto addr = [&](ElfW(Addr) v) { return v < m.base ? m.base + v : v; };
    ElfW(Addr) jmprel = 0, symtab = 0, strtab = 0;
    size_t pltrelsz = 0;
    long pltrel = 0;
    bool bind_now = false;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
            case DT_JMPREL: jmprel = addr(d->d_un.d_ptr); break;
            case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
            case DT_PLTREL: pltrel = static_cast<long>(d->d_un.d_val); break;
            case DT_SYMTAB: symtab = addr(d->d_un.d_ptr); break;
            case DT_STRTAB: strtab = addr(d->d_un.d_ptr); break;
            case DT_FLAGS: bind_now |= (d->d_un.d_val & DF_BIND_NOW) != 0; break;
            case DT_FLAGS_1: bind_now |= (d->d_un.d_val & DF_1_NOW) != 0; break;
            case DT_BIND_NOW: bind_now = true; break;
            default: break;
        }
    }
    if (jmprel == 0 || pltrelsz == 0 || symtab == 0 || strtab == 0 || pltrel != DT_RELA) {
        *error = "the main program has no PLT relocations to patch";
        return 0;
    }
    // glibc protects RELRO from its start rounded down to the end rounded
    // down to a page: only slots below that end are read-only now.
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t ro_begin = relro_start & ~(page - 1);
    const uintptr_t ro_end = relro_end & ~(page - 1);

    const ElfW(Rela) *rel = reinterpret_cast<const ElfW(Rela) *>(jmprel);
    const size_t count = pltrelsz / sizeof(ElfW(Rela));
    const ElfW(Sym) *syms = reinterpret_cast<const ElfW(Sym) *>(symtab);
    const char *strs = reinterpret_cast<const char *>(strtab);
    int done = 0;
    for (size_t r = 0; r < count; r++) {
        if (ELF64_R_TYPE(rel[r].r_info) != R_X86_64_JUMP_SLOT) continue;
        const char *name = strs + syms[ELF64_R_SYM(rel[r].r_info)].st_name;
        for (int i = 0; i < n; i++) {
            GotPatch &p = patches[i];
            if (p.patched || std::strcmp(name, p.name) != 0) continue;
            void **slot = reinterpret_cast<void **>(m.base + rel[r].r_offset);
            void *current = __atomic_load_n(slot, __ATOMIC_RELAXED);
            if (current == p.replacement) {  // patched before: never twice
                p.patched = *p.original != nullptr;
                done += p.patched;
                continue;
            }
            void *orig = bind_now ? current : dlsym(RTLD_DEFAULT, p.name);
            if (orig == nullptr || orig == p.replacement) continue;
            uintptr_t at = reinterpret_cast<uintptr_t>(slot);
            uintptr_t pg = at & ~(page - 1);
            bool read_only = at >= ro_begin && at < ro_end;
            if (read_only && mprotect(reinterpret_cast<void *>(pg), page, PROT_READ | PROT_WRITE) != 0) {
                *error = std::string("mprotect failed on the GOT of ") + p.name;
                continue;
            }
            *p.original = orig;
            __atomic_store_n(slot, p.replacement, __ATOMIC_RELEASE);
            if (read_only) mprotect(reinterpret_cast<void *>(pg), page, PROT_READ);
            p.patched = true;
            done++;
        }
    }
    if (done == 0 && error->empty()) *error = "none of the calls is imported through the PLT";
    return done;
#endif
}

}  // namespace psw
