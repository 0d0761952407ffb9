/*
 * array_spill: park a big array in an unlinked temporary file while a phase that never reads it
 * needs the memory (doc/heap-analysis.md, "Memory"): the dominators run without the object
 * ids, their bucket index, the classes and the shallow sizes in the process.
 */
#ifndef ARRAY_SPILL_H
#define ARRAY_SPILL_H

#include <stddef.h>

struct array_spill {
    int fd; /* -1: the array stayed in memory */
    size_t bytes;
};

/* Write the `bytes` of *p to a temporary file in $TMPDIR (else /tmp), free it and set *p to
 * NULL. When the file cannot be written the array simply stays in memory. */
void array_spill_out(struct array_spill *s, void **p, size_t bytes);
/* Read a spilled array back into *p (a new malloc block). 0, or -1 out of memory or I/O. */
int array_spill_in(struct array_spill *s, void **p);

#endif
