/*
 * phd_parse: the strict reader of OpenJ9 portable heap dumps (PHD, versions 4-6) behind
 * phd-read (tools/phd_read.c) and hprof-diff's PHD histogram: the header, every record kind,
 * the checks (each violation reported once with its file offset), and the index that resolves
 * class addresses and references once the whole file is read. Written from the format notes
 * (doc/phd.md, doc/tools.md), independently of the writer. Pure C11.
 */
#ifndef PHD_PARSE_H
#define PHD_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum phd_kind { PHD_K_OBJECT, PHD_K_OBJ_ARRAY, PHD_K_PRIM_ARRAY, PHD_K_CLASS };

struct phd_rec {
    uint64_t addr;
    uint64_t cls;     /* objects: class; object arrays: element class; classes: super */
    uint64_t refs_at; /* index of the first reference in refs[] */
    uint32_t nrefs;
    uint8_t kind;
    uint8_t ptype;    /* primitive arrays: type code 0-7 */
    int64_t length;   /* arrays: true length (-1 unknown: tag 5) */
    uint64_t size;    /* arrays (v6): instance size in bytes; classes: instance size */
    uint64_t off;     /* file offset of the tag */
    uint32_t name_at; /* classes: offset into names */
};

struct phd_file {
    const char *path;
    const uint8_t *p;
    size_t len, pos;
    bool truncated;
    /* header */
    int32_t version, flags;
    bool wide, all_hashed;
    unsigned unit;
    char full_version[256];
    /* records */
    struct phd_rec *recs;
    size_t nrecs, cap;
    uint64_t *refs;
    size_t nrefs_all, refs_cap;
    char *names;
    size_t names_len, names_cap;
    /* checks */
    uint64_t errors, warnings, reported, max_reports;
    uint64_t dangling, allow_dangling, ibm_hidden_refs, hashes;
    bool oom;
    char first_error[240]; /* "offset N: ..." of the first error, for one-line messages */
};

/* Records sorted by address, for resolving class addresses and references. */
struct phd_index {
    size_t *by_addr;
    size_t n;
};

/* One violation: counted, printed on stderr as "path:offset: error|warning: ..." up to
 * f->max_reports. */
void phd_violation(struct phd_file *f, bool error, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The header: false (reported) if the file is not a PHD file of a known version. */
bool phd_read_header(struct phd_file *f);
/* Every record after the header. */
void phd_read_records(struct phd_file *f);
/* The index of f's records; false on out of memory. */
bool phd_build_index(struct phd_file *f, struct phd_index *ix);
/* The record at addr, NULL if none. */
const struct phd_rec *phd_find(const struct phd_file *f, const struct phd_index *ix, uint64_t addr);
/* A class record's name (slash form). */
const char *phd_class_name(const struct phd_file *f, const struct phd_rec *c);
/* The type name of a record, as phd-read prints it. */
const char *phd_type_name(const struct phd_file *f, const struct phd_index *ix,
                          const struct phd_rec *r, char *buf, size_t len);
/* The bytes a record stands for in the histogram. */
uint64_t phd_rec_bytes(const struct phd_file *f, const struct phd_index *ix,
                       const struct phd_rec *r);
/* The whole file in memory; NULL with a message in err. */
uint8_t *phd_slurp(const char *path, size_t *lenp, char *err, size_t errlen);
void phd_free_file(struct phd_file *f, struct phd_index *ix);

#endif
