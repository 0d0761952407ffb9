/* What the parts of the heap dump's class list share (heap_classes.c: the list and the per-dump
 * state; heap_classes_fields.c: field layouts; heap_classes_elements.c: object arrays' element
 * classes). Internal to heap_dump/; one dump at a time, like heap_classes.h. */
#ifndef HPROF_HEAP_CLASSES_INTERNAL_H
#define HPROF_HEAP_CLASSES_INTERNAL_H

#include <jvmti.h>
#include <stdint.h>

#include "heap_classes.h"
#include "tags.h"

/* Longest superclass chain read; a deeper class gets no layout. */
#define DUMP_CLASS_MAX_CHAIN 256

/* A class's id in the dump: its class object's tag. */
static inline hprof_id heap_classes_id_of(uint32_t serial)
{
    return serial ? tag_make(TAG_SITE_CLASS, serial) : 0;
}

/* The class's entry, made on first use (kept across dumps); NULL for serial 0 or out of
 * memory. */
struct dump_class *heap_classes_entry(uint32_t serial);

/* Reads the field layout of instance class k (and the declared fields of its supers and
 * interfaces); sets c->has_layout when it could. */
void heap_classes_fields_read_layout(jvmtiEnv *jvmti, JNIEnv *jni, jclass k, struct dump_class *c);

/* Gives every object array class in the dump the class id of its element class, or of
 * object_serial's class when none matches. Returns 0 or -1 (memory). */
int heap_classes_elements_link(uint32_t object_serial);

#endif
