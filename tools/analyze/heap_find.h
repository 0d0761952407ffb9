/*
 * heap_find: back from graph nodes to the dump: the records of a few objects (one walk over
 * the dump for a batch), the name of the field that holds a reference, primitive field values,
 * string contents. The graph keeps no per-object file offset (8 bytes an object saved); the
 * reports that need one ask for the few nodes they print.
 */
#ifndef HEAP_FIND_H
#define HEAP_FIND_H

#include "heap_graph.h"

/* File offsets of the sub-records (their tag byte) of nodes[0..n), 0 where not found. */
int heap_find_records(const struct heap_graph *g, const uint32_t *nodes, size_t n,
                      uint64_t *offsets);

/* Call fn with the record offset of every object (instances, arrays, classes) of the dump, in
 * file order; the records passed the loader's checks. -1 on a walk error. */
int heap_find_each(const struct heap_graph *g, void (*fn)(void *ctx, uint64_t rec), void *ctx);

/* Byte offset and basic type of instance field `name` of class ci (its own or inherited) in
 * the instance data: 0, or -1 if the class has no such field. */
int heap_find_field_offset(const struct heap_graph *g, uint32_t ci, const char *name, uint32_t *off,
                           unsigned *type);

/* How the object at record offset `rec` refers to node `to`: "field name", "[index]" or
 * "static name", written into buf; "?" if it does not. */
const char *heap_find_ref_name(const struct heap_graph *g, uint64_t rec, uint32_t to, char *buf,
                               size_t len);

/* An instance field's raw value (ids and numbers, big-endian in the dump) by name: 0 if found. */
int heap_find_field(const struct heap_graph *g, uint64_t rec, const char *name, uint64_t *value);

/* A java.lang.String's text (Latin-1/UTF-16 byte[] or char[] value), as UTF-8 cut to len-1
 * bytes; needs the String's record and its value array's record. */
const char *heap_find_string(const struct heap_graph *g, uint64_t str_rec, uint64_t arr_rec,
                             char *buf, size_t len);

#endif
