/*
 * grow.h: the growth rule of every array of the reading library (tools/reader/).
 */
#ifndef HPROF_READER_GROW_H
#define HPROF_READER_GROW_H

#include <stddef.h>

/* p grown to hold at least need elements of elsz bytes (*cap updated); NULL when out of
 * memory, p then unchanged and still owned by the caller (or when need is 0 and p NULL). */
void *reader_grow(void *p, size_t *cap, size_t need, size_t elsz);

#endif
