/* The instance fields of java.lang.Class objects, which FollowReferences never reports: it
 * reports a class object's statics, loader, constant pool... but not its own fields (name,
 * reflectionData, module, enumConstants, annotationData, classValueMap...). Objects reachable
 * only through them (cached names, reflection caches) would be missing from a dump, and a
 * primitive type's class object (int.class) would have no field values at all.
 *
 * So before the walk these fields are read through JNI for every class object and kept in one
 * Object[] (the holder) under a JNI global reference: the walk starts from it as from a root,
 * visits what it holds, and writes neither the holder nor its root. The values it holds are
 * the values when read, a moment before the walk (a value replaced in between is dumped as
 * well, never left dangling). A CLASS DUMP has no place for these fields; INSTANCE DUMPs of
 * the primitive types' class objects get them all. */
#ifndef HPROF_HEAP_MIRRORS_H
#define HPROF_HEAP_MIRRORS_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

/* Reads the fields, builds and tags the holder (in denv). Needs heap_classes_prepare first.
 * On failure the dump goes on without them (logged). */
void heap_mirrors_prepare(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni);

/* The holder's tag in the dump environment (0 when there is none). */
uint64_t heap_mirrors_holder_tag(void);

/* During the walk: the holder's element index was reported as id. */
void heap_mirrors_element(uint32_t index, hprof_id id);

/* After the walk: the field values (java.lang.Class layout) of the class object named id if it
 * is a primitive type's, else NULL. */
const union hprof_value *heap_mirrors_values(hprof_id id);

/* Drops the holder. */
void heap_mirrors_release(JNIEnv *jni);

#endif
