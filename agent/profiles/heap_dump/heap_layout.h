/* Field layouts for heap dumps, pure C. FollowReferences names a field by a JVMTI field
 * index; an INSTANCE DUMP holds values in its own order. A class_layout maps one to the other.
 *
 * JVMTI field index (JVMTI spec, jvmtiHeapReferenceInfoField): the fields of the class and of
 * all its superclasses and superinterfaces are numbered together; the fields declared by the
 * transitive superinterfaces come first (indexes 0 .. interface_fields-1), then the fields
 * declared by each class from java.lang.Object down to the class itself, each class's fields
 * (static and instance) in GetClassFields order.
 *
 * INSTANCE DUMP order (as HotSpot writes it and readers expect): the class's own instance
 * fields, then its superclass's, and so on up to java.lang.Object. */
#ifndef HPROF_HEAP_LAYOUT_H
#define HPROF_HEAP_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* A declared field, as GetClassFields lists it. */
struct layout_field {
    hprof_id name_id;
    const char *name;
    enum hprof_basic_type type;
    bool is_static;
};

/* The declared fields of one class of a chain. */
struct layout_level {
    const struct layout_field *fields;
    uint32_t nfields;
};

struct class_layout {
    /* Every instance field, own first then the superclasses': INSTANCE DUMP value order. */
    struct hprof_field *instance;
    uint32_t ninstance;
    uint32_t nown;           /* instance[0 .. nown) are the class's own fields */
    uint32_t instance_bytes; /* value bytes of an INSTANCE DUMP (8-byte ids) */
    /* The class's own static fields, in declaration order. */
    struct hprof_field *statics;
    uint32_t nstatics;
    /* JVMTI field index -> instance slot or static slot; -1 where the index names neither
     * (an interface's constant, another class's static). nindex = every field counted. */
    uint32_t nindex;
    int32_t *slot_of_index;
    int32_t *static_of_index;
};

/* Builds the layout of a class from its chain: chain[0] is the class, chain[k+1] the
 * superclass of chain[k], the last one java.lang.Object (or the class itself for Object and
 * interfaces). interface_fields: the fields declared by all its transitive superinterfaces.
 * Returns 0, or -1 when out of memory (out is then empty). Free with heap_layout_free. */
int heap_layout_build(const struct layout_level *chain, size_t nlevels, uint32_t interface_fields,
                      struct class_layout *out);

void heap_layout_free(struct class_layout *l);

/* HPROF basic type of a JVM field signature ("I", "Ljava/lang/String;", "[J"). */
enum hprof_basic_type heap_layout_type_of_signature(const char *sig);

/* Shallow sizes of object arrays: size(n) = align_up(header + n * elem, align). */
struct array_size_rule {
    uint32_t header, elem, align;
};

/* Finds the rule that gives sizes[n] for every n in [0, count) (sizes of Object[0],
 * Object[1], ... measured with GetObjectSize). Returns false when no rule fits. */
bool heap_layout_solve_array_rule(const uint64_t *sizes, size_t count, struct array_size_rule *out);

static inline uint64_t layout_array_size(const struct array_size_rule *r, uint64_t n)
{
    uint64_t raw = r->header + n * r->elem;
    return (raw + r->align - 1) / r->align * r->align;
}

#endif
