/* Native program counters to "symbol" and "library", off the signal path: the executable
 * mappings of /proc/self/maps and the function symbols (.symtab, else .dynsym) of their ELF
 * files, read when a library is first asked about. A pc whose symbol is unknown (a stripped
 * library, a local function missing from .dynsym) is named by its library alone. Not
 * thread-safe: one thread at a time (cpu=samples' drain). doc/cpu-samples.md, "Native code". */
#ifndef HPROF_NATIVE_SYMBOLS_H
#define HPROF_NATIVE_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

struct native_symbols;

/* Reads /proc/self/maps now (libraries mapped later are found by a later re-read). NULL: out
 * of memory. */
struct native_symbols *native_symbols_new(void);
void native_symbols_free(struct native_symbols *ns);

struct native_place {
    const char *library; /* base name of the mapped file: "libz.so.1.2.13" */
    const char *symbol;  /* the function, or NULL when unknown */
};

/* Where pc is: false when it is in no file mapping (the JIT's code cache, anonymous memory,
 * the vdso). Strings stay valid until native_symbols_free. */
bool native_symbols_lookup(struct native_symbols *ns, uintptr_t pc, struct native_place *out);

#endif
