/* The classes of a heap dump: for every loaded class, what its CLASS DUMP says (super, loader,
 * field descriptions) and the layout that places FollowReferences' field indexes into
 * INSTANCE DUMP values. Layouts are read once per class (a class's fields never change) and
 * kept for later dumps; the per-dump part (static values, constant pool entries, protection
 * domain, signers, sizes) is reset by each heap_classes_prepare.
 *
 * The heap walk runs in its own JVMTI environment (the dump environment, see heap_walk.h);
 * heap_classes_prepare gives every class object there the same tag it has in the agent's
 * environment (its class id), and every class loader a tag of its own, so the walk can
 * name classes and loaders before and during the walk alike. Not thread-safe: one dump at a
 * time (dump_request_all's lock). */
#ifndef HPROF_HEAP_CLASSES_H
#define HPROF_HEAP_CLASSES_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "heap_layout.h"
#include "hprof_error.h"
#include "writer.h"

struct dump_class {
    uint32_t serial;
    const char *name; /* Java source form ("java.lang.String", "int[]") */
    bool in_dump;     /* loaded at the last prepare: gets a CLASS DUMP */
    bool has_layout;
    bool writable; /* an instance class whose layout and every superclass's layout were read
                      (it was prepared when the dump listed it): its INSTANCE DUMPs can be
                      written; instances of other classes are left out (heap_walk.c) */
    bool is_interface;
    uint8_t array_type; /* names_array_type(): 0, 2 (objects) or a primitive type */
    hprof_id super_id;  /* class id of the superclass, 0 for java.lang.Object */
    hprof_id loader_id; /* id of the defining loader (its dump-environment tag), 0 = boot */
    hprof_id elem_id;   /* object arrays: class id of the element class (PHD), or Object's */
    struct class_layout layout;
    struct layout_field *declared; /* declared fields (GetClassFields order) */
    uint32_t ndeclared;

    /* Filled by the walk, reset by heap_classes_prepare. */
    bool visited;            /* its Class object was visited (statics reported) */
    hprof_id walk_loader_id; /* CLASS_LOADER reference, when reported */
    hprof_id domain_id, signers_id;
    struct hprof_static_field *statics; /* layout.nstatics fields; values set by the walk */
    struct hprof_cp_entry *cp;
    uint32_t ncp, cp_cap;
    uint64_t instance_size; /* shallow size of one instance, as FollowReferences reports it */
    uint64_t mirror_size;   /* shallow size of the Class object */
};

/* Registers every loaded class, reads the layouts not read yet, tags classes and loaders in
 * denv. jvmti: the agent's environment (class tags, class table). Returns why it could not
 * (the caller says what is lost).
 *
 * The classes listed are pinned until heap_classes_release: their class objects are held in
 * one Object[] under a JNI global reference (tagged heap_classes_pin_tag() in denv), so none
 * of them can unload between the list and the walk, and the walk visits every one (its
 * statics, loader, domain, signers), reachable or not. */
struct hprof_error heap_classes_prepare(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni);

/* Adds the classes loaded since heap_classes_prepare (or the last update) the same way, so
 * that the walk, right after, meets as few unknown classes as possible. *added: how many it
 * added (and retried: not linked before). */
struct hprof_error heap_classes_update(jvmtiEnv *jvmti, jvmtiEnv *denv, JNIEnv *jni,
                                       uint32_t *added);

/* The pinning arrays' tag in the dump environment (0 when there is none): the walk writes
 * neither it nor its root. */
uint64_t heap_classes_pin_tag(void);

/* Drops the pin (after the walk). */
void heap_classes_release(JNIEnv *jni);

/* During the walk: the object tagged tag (in denv) was written. Class loaders are tagged by
 * heap_classes_prepare; a CLASS DUMP names a loader only if it was written. */
void heap_classes_note_written(uint64_t tag);

/* The class of a class serial, NULL if unknown. Valid until the next prepare. */
struct dump_class *heap_classes_get(uint32_t serial);
/* Serials are 1 .. heap_classes_limit() - 1. */
uint32_t heap_classes_limit(void);

/* The class whose class object carries tag, or NULL. */
struct dump_class *heap_classes_of_tag(uint64_t tag);

/* Serial of java.lang.Class and of java.lang.Object[] (0 if not loaded). */
uint32_t heap_classes_class_serial(void);
uint32_t heap_classes_object_array_serial(void);

/* Shallow size of an object array of n elements. */
uint64_t heap_classes_object_array_size(uint64_t n);

/* Adds a constant pool entry to c (during the walk). Out of memory: the entry is dropped. */
void heap_classes_add_cp(struct dump_class *c, uint16_t index, hprof_id id);

/* Writes the STRING records of every name the classes' CLASS DUMPs and INSTANCE DUMPs use,
 * and a LOAD CLASS for every class in the dump (output lock held, before the heap dump). */
void heap_classes_write_names(struct hprof_writer *w);

/* Fills out the CLASS DUMP of c from its layout and walk state (pointers into c). */
void heap_classes_describe(const struct dump_class *c, struct hprof_class_dump *out);

/* The Java source name of a class serial ("java.lang.String", "int[]"), "?" if unknown. */
const char *heap_classes_name(uint32_t serial);

#endif
