/*
 * mapped_dump: random access to one heap dump of an HPROF binary file, for tools that walk the
 * object graph several times (tools/analyze/). The file is mapped read-only (a gzip file is
 * first inflated into an unlinked temporary file, then mapped), the top-level records are
 * indexed once: STRING ids, LOAD CLASS names, START THREAD serials, and the body ranges of the
 * HEAP DUMP / HEAP DUMP SEGMENT records of the chosen dump. Pure C11 + zlib + POSIX mmap.
 */
#ifndef MAPPED_DUMP_H
#define MAPPED_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mdump_range {
    uint64_t off, len; /* body of one HEAP DUMP (SEGMENT) record, file offsets */
};

struct mdump_str {
    uint64_t id, off; /* off: the UTF-8 bytes in the mapping */
    uint32_t len;
};

struct mdump_class {
    uint64_t class_id, name_id;
};

struct mapped_dump {
    const uint8_t *base; /* the whole (inflated) file */
    uint64_t size;
    unsigned idsize;
    bool gzip;
    size_t ndumps; /* heap dumps in the file */
    size_t which;  /* the chosen one (0-based) */
    struct mdump_range *ranges;
    size_t nranges;
    uint64_t dump_bytes;    /* sum of the ranges' lengths */
    struct mdump_str *strs; /* sorted by id */
    size_t nstrs;
    struct mdump_class *classes; /* LOAD CLASS, sorted by class id */
    size_t nclasses;
};

/*
 * Open path and index the dump number `which` (0-based; SIZE_MAX: the last one). Returns 0, or -1
 * with a one-line message in err (with the byte offset for bad input; `*bad_input` set then, so the
 * caller can exit 2 rather than 1 for an I/O or memory error).
 */
int mdump_open(struct mapped_dump *m, const char *path, size_t which, char *err, size_t errlen,
               bool *bad_input);
void mdump_close(struct mapped_dump *m);

/* Drop the pages of [off, off + len) from the process (they stay in the page cache): a walk
 * over the dump calls it behind itself, so the mapping does not grow the RSS. */
void mdump_release(const struct mapped_dump *m, uint64_t off, uint64_t len);

/* The UTF-8 bytes of string id (NULL if undefined). */
const char *mdump_string(const struct mapped_dump *m, uint64_t id, uint32_t *len);
/* The name string id of a LOAD CLASS class id (0 if none). */
uint64_t mdump_class_name_id(const struct mapped_dump *m, uint64_t class_id);

static inline uint32_t mdump_u4(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t mdump_id(const struct mapped_dump *m, const uint8_t *p)
{
    return m->idsize == 8 ? (uint64_t)mdump_u4(p) << 32 | mdump_u4(p + 4) : mdump_u4(p);
}

#endif
