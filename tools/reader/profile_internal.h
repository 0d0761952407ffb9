/*
 * profile_internal.h: what profile.c shares with the two loaders (profile_binary.c,
 * profile_ascii.c). Not for the tools: they use profile.h.
 */
#ifndef HPROF_PROFILE_INTERNAL_H
#define HPROF_PROFILE_INTERNAL_H

#include "grow.h"
#include "profile.h"

#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#define PVEC(T)                                                                                    \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }
#define VRESERVE(M, vec, need)                                                                     \
    ((vec).v = pm_grow((M), (vec).v, &(vec).cap, (need), sizeof *(vec).v))
#define VPUSH(M, vec) (VRESERVE(M, vec, (vec).n + 1), &(vec).v[(vec).n++])
#define VFREE(vec) (free((vec).v), (vec).v = NULL, (vec).n = (vec).cap = 0)

struct strent {
    char *s; /* NULL = empty slot */
    size_t len;
    uint64_t hash;
    uint32_t val;
};
struct strtab {
    struct strent *e;
    size_t cap, n;
};

struct ptrace_b {
    uint32_t serial, thread, nframes;
    size_t first; /* into tframes */
};
struct serial_ix {
    uint32_t serial, index;
};

/* What the profile keeps after loading (hprof_profile.priv) */
struct pstore {
    char **strs;
    size_t nstrs;
    uint32_t *tframes;
};

struct pbinary; /* profile_binary.c */
struct aparse;  /* profile_ascii.c */

struct pmodel {
    struct hprof_profile *p;
    const char *path;
    char *err;
    size_t errlen;
    jmp_buf jb;
    int fd;
    gzFile gz;
    long want; /* section index asked for (0-based), -1 = the last */

    struct strtab strs;       /* every string of the profile, once */
    struct strtab frame_keys; /* frame key -> index into frames */
    PVEC(struct hprof_pframe) frames;
    PVEC(struct ptrace_b) traces;
    PVEC(uint32_t) tframes;
    PVEC(struct serial_ix) trace_ix;
    size_t rows_cap[HPROF_NSECTIONS];
    struct pbinary *bin;
    struct aparse *ascii;
};

_Noreturn void pm_fail(struct pmodel *M, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void *pm_grow(struct pmodel *M, void *p, size_t *cap, size_t need, size_t elsz);
struct strent *pm_intern(struct pmodel *M, struct strtab *t, const char *s, size_t n, bool *fresh);
const char *pm_str(struct pmodel *M, const char *s, size_t n);
/* the index of the frame with these parts (src NULL = unknown), added if new */
uint32_t pm_frame(struct pmodel *M, const char *cls, size_t cl, const char *method, size_t ml,
                  const char *sig, size_t sl, const char *src, size_t srcl, int32_t line);
void pm_trace(struct pmodel *M, uint32_t serial, uint32_t thread, const uint32_t *frames,
              uint32_t n);
uint32_t pm_trace_index(const struct pmodel *M, uint32_t serial);
/* a new section of kind k: the one to fill, or NULL when it is not the one asked for. Rows
 * hold the trace serial in row->trace until the end (resolved to an index then). */
struct hprof_section *pm_section_begin(struct pmodel *M, enum hprof_section_kind k, uint64_t total);
struct hprof_row *pm_row(struct pmodel *M, struct hprof_section *s);

void pm_load_binary(struct pmodel *M);
void pm_binary_free(struct pmodel *M);
void pm_load_ascii(struct pmodel *M);
void pm_ascii_free(struct pmodel *M);

#endif
