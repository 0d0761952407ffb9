/* Loaded classes with stable serials. A registered class object carries the tag
 * tag_make(TAG_SITE_CLASS, serial), so jclass -> serial is one GetTag. Thread-safe. */
#ifndef HPROF_CLASS_TABLE_H
#define HPROF_CLASS_TABLE_H

#include <jvmti.h>
#include <stdatomic.h>
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
    atomic_bool unloaded;  /* its class object was freed (ObjectFree, any thread) */
};

int class_table_init(void);

/* The serial of klass, registering it (and tagging its Class object) on first sight.
 * Returns 0 if the class cannot be inspected. */
uint32_t class_table_serial_of(jvmtiEnv *jvmti, jclass klass);

/* A class that is no Java class (cpu=samples' pseudo-frames): a serial and a LOAD CLASS
 * record with this name, and no class object. Returns 0 when out of memory. */
uint32_t class_table_register_synthetic(const char *name);

/* Registers every loaded class (at VM init or attach). */
void class_table_register_loaded(jvmtiEnv *jvmti, JNIEnv *jni);

/* NULL for an unknown serial. */
const struct class_info *class_table_get(uint32_t serial);
uint32_t class_table_count(void);

/* Called when a class object's tag is freed (ObjectFree): the class was unloaded. */
void class_table_mark_unloaded(uint32_t serial);
/* Classes marked unloaded so far. */
uint32_t class_table_unloaded_count(void);

/* Class unloading is learned from ObjectFree events of a JVMTI environment of the table's own
 * (the unload watcher) in which every registered class object carries its class id: a class
 * object is freed exactly when its class unloads. Set up at start-up (class_table_init); if the VM
 * refuses, no unload is ever reported (one warning). doc/formats.md, UNLOAD CLASS. */
/* Has the VM post the ObjectFree events of class objects already freed (JDK 16+ posts them
 * lazily), so that emit_unloads sees every unload up to now. */
void class_table_flush_unloads(void);

/* Frees the table (no thread may use it any more): a failed start leaves nothing behind. */
void class_table_teardown(void);

#endif
