/* Loaded classes with stable serials. A registered class object carries the tag
 * tag_make(TAG_SITE_CLASS, serial), so jclass -> serial is one GetTag. Thread-safe. */
#ifndef HPROF_CLASS_TABLE_H
#define HPROF_CLASS_TABLE_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "writer.h"

struct class_info {
    uint32_t serial;
    hprof_id class_id;     /* the Class object's tag, also its HPROF object id */
    hprof_id name_id;      /* string id of the Java source name */
    const char *name;      /* "java.lang.String", "int[]" */
    const char *signature; /* "Ljava/lang/String;" */
    uint8_t array_type;    /* names_array_type() */
    bool unloaded;
};

int classes_init(void);

/* The serial of klass, registering it (and tagging its Class object) on first sight.
 * Returns 0 if the class cannot be inspected. */
uint32_t classes_serial_of(jvmtiEnv *jvmti, jclass klass);

/* Registers every loaded class (at VM init or attach). */
void classes_register_loaded(jvmtiEnv *jvmti, JNIEnv *jni);

/* NULL for an unknown serial. */
const struct class_info *classes_get(uint32_t serial);
uint32_t classes_count(void);

/* Called when a class object's tag is freed (ObjectFree): the class was unloaded. */
void classes_mark_unloaded(uint32_t serial);

/* Frees the table (no thread may use it any more): a failed start leaves nothing behind. */
void classes_teardown(void);

#endif
