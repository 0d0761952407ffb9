/* The heap walk of a heap dump: one FollowReferences from the heap roots, in the agent's dump
 * environment (a JVMTI environment of its own whose tags are only class objects, class
 * loaders and threads, see heap_classes.h), turned into HPROF records as the VM reports them.
 *
 * FollowReferences visits every reachable object once and reports, for each visit, the
 * object's class reference first, then its fields (instances), its non-null elements (object
 * arrays) or its contents (primitive arrays); a class object reports its loader, protection
 * domain, signers, constant pool entries and static fields. The walk keeps the object being
 * visited and writes its record when the next visit starts. Roots come first.
 *
 * Object ids. A tagged object is named by its tag. An untagged one needs an id that its
 * record and every reference to it agree on. Two ways:
 *  - WALK_IDS_TAGS: tag it on first sight (tag_make(0, tags_next_serial())). Correct on
 *    every VM, but HotSpot's tag map costs about 60 bytes per object and several hash
 *    look-ups per reference: on a heap of 30 M objects, 2 GB more memory and 5-10x the time of
 *    HotSpot's own dumper (doc/heap-dump.md). The dump environment is dropped after the dump,
 *    which frees those tags at once.
 *  - WALK_IDS_ADDRESSES: name it by its address (tag_address_id). JVMTI does not hand out
 *    addresses; HotSpot 17..25 keeps, next to the tag it passes a callback, the object it is
 *    about (its callback wrapper: object, size, tag, class tag, one word each). The walk
 *    reads that word, and checks on every callback that the neighbours hold the size and
 *    class tag the callback was given. Addresses do not move during the walk (one safepoint).
 *    heap_walk_probe() checks the whole scheme on a known object graph before it is used;
 *    a mismatch during a walk stops it (heap_walk_result.layout_broken).
 */
#ifndef HPROF_HEAP_WALK_H
#define HPROF_HEAP_WALK_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "heap_classes.h"
#include "writer.h"

enum walk_ids { WALK_IDS_ADDRESSES, WALK_IDS_TAGS };

/* The address of the object a heap callback's tag pointer is about, read from HotSpot's
 * callback wrapper (above), if its neighbours hold the class tag and size (size < 0: not
 * checked) the callback was given; false if they do not. The same wrapper serves
 * FollowReferences and IterateThroughHeap. */
static inline bool heap_walk_address_of(const jlong *tp, jlong class_tag, jlong size,
                                        uint64_t *address)
{
    if ((size >= 0 && tp[-1] != size) || tp[1] != class_tag)
        return false;
    *address = (uint64_t)tp[-2];
    return true;
}

/* Where the walk's records go. Called on the VM thread during the walk: no JNI, no JVMTI
 * except memory functions, no lock another thread may hold while calling into the VM. */
struct walk_out {
    void *ctx;
    /* A root; thread serials and traces are already resolved. */
    void (*root)(void *ctx, const struct hprof_root *r);
    /* values: c->layout.ninstance values in INSTANCE DUMP order. */
    void (*instance)(void *ctx, const struct dump_class *c, hprof_id id, uint32_t trace,
                     uint64_t size, const union hprof_value *values);
    void (*obj_array)(void *ctx, const struct dump_class *c, hprof_id id, uint32_t trace,
                      uint64_t size, uint32_t n, const hprof_id *elems);
    void (*prim_array)(void *ctx, hprof_id id, uint32_t trace, enum hprof_basic_type type,
                       uint64_t size, uint32_t n, const void *elems);
    /* The allocation trace of the object at this address (WALK_IDS_ADDRESSES only; NULL: the
     * empty trace for every object). */
    uint32_t (*trace_of)(void *ctx, uint64_t address);
    /* A hint: trace_of will soon be asked about this address (NULL: none). The walk gives it
     * every referree's address when the reference is reported, before the referree's visit,
     * so that a look-up's cache miss overlaps the VM's work in between. */
    void (*trace_soon)(void *ctx, uint64_t address);
    /* Thread serial and trace of a thread's dump-environment tag; false if unknown. */
    bool (*thread_of_tag)(void *ctx, uint64_t tag, uint32_t *serial, uint32_t *trace);
    /* Polled now and then: true stops the walk (the output failed). */
    bool (*stop)(void *ctx);
};

struct heap_walk_result {
    uint64_t objects, bytes; /* instances and arrays written, with their shallow sizes */
    uint64_t instances, obj_arrays, prim_arrays, roots;
    uint64_t class_objects_bytes; /* shallow sizes of the class objects of dumped classes */
    uint64_t unknown_class;       /* objects of classes the dump did not know (written as
                                     their nearest known kind, see heap_walk.c) */
    uint64_t layout_mismatches;   /* field indexes the class layout did not expect */
    uint64_t refs_nulled;         /* references to objects left out, written as null */
    uint64_t roots_left_out;      /* roots of objects left out */
    bool aborted;                 /* stopped by out->stop */
    bool layout_broken;           /* WALK_IDS_ADDRESSES: the VM's callback layout changed */
    bool failed;                  /* FollowReferences failed, or out of memory */
};

/* Checks WALK_IDS_ADDRESSES on a small graph made with jni. Classes must be prepared in denv
 * (heap_classes_prepare). Returns true if it can be used. */
bool heap_walk_probe(jvmtiEnv *denv, JNIEnv *jni);

/* Runs the walk. Class objects are not written (heap_classes_describe has what the walk
 * found about them); class objects the walk found that are no class of heap_classes (the
 * primitive types' int.class...) are written as instances of java.lang.Class whose fields
 * FollowReferences does not report (zero). */
void heap_walk_run(jvmtiEnv *denv, enum walk_ids ids, const struct walk_out *out,
                   struct heap_walk_result *res);

#endif
