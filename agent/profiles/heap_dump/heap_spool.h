/* A heap dump held back in a temporary file: for output formats that print the dump's totals
 * before its records (hprof ascii: "HEAP DUMP BEGIN (N objects, M bytes)"), the walk's
 * records are spooled here and replayed once the totals are known. Records are kept in the
 * walk's terms (class serials, raw values); the replay hands them back the same way. Pure C.
 * The file ($TMPDIR, else /tmp) is unlinked at once, so nothing is left behind. */
#ifndef HPROF_HEAP_SPOOL_H
#define HPROF_HEAP_SPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

struct heap_spool;

/* NULL (with errno set) if no temporary file can be made. */
struct heap_spool *spool_open(void);
void spool_close(struct heap_spool *s);
/* True once a write failed (disk full): later writes are dropped, replay fails. */
bool spool_failed(const struct heap_spool *s);

void spool_root(struct heap_spool *s, const struct hprof_root *r);
void spool_instance(struct heap_spool *s, uint32_t class_serial, hprof_id id, uint64_t size,
                    uint32_t nvalues, const union hprof_value *values);
void spool_obj_array(struct heap_spool *s, uint32_t class_serial, hprof_id id, uint64_t size,
                     uint32_t n, const hprof_id *elems);
void spool_prim_array(struct heap_spool *s, hprof_id id, enum hprof_basic_type type, uint64_t size,
                      uint32_t n, const void *elems);

struct spool_reader {
    void *ctx;
    /* r->class_name is NULL: the reader knows the class by r->object. */
    void (*root)(void *ctx, const struct hprof_root *r);
    void (*instance)(void *ctx, uint32_t class_serial, hprof_id id, uint64_t size, uint32_t nvalues,
                     const union hprof_value *values);
    void (*obj_array)(void *ctx, uint32_t class_serial, hprof_id id, uint64_t size, uint32_t n,
                      const hprof_id *elems);
    void (*prim_array)(void *ctx, hprof_id id, enum hprof_basic_type type, uint64_t size,
                       uint32_t n, const void *elems);
};

/* Reads every record back, in order. Returns 0, or -1 if the file could not be read back
 * (records up to the failure were delivered). */
int spool_replay(struct heap_spool *s, const struct spool_reader *r);

#endif
