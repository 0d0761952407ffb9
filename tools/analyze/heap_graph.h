/*
 * heap_graph: one heap dump as a compact object graph (doc/heap-analysis.md).
 *
 * Nodes are dense 32-bit indexes: 0 is a virtual root above every GC root, 1..nthreads are one
 * virtual node per thread above the objects its stack frames (Java frame and JNI local roots)
 * hold, and the objects (instances, arrays, class objects) follow, in increasing id order, so
 * an id is found by a binary search among the segments of its high half, then in the bucket of
 * its low half (no per-object allocation). The references are one compressed-sparse-row array of
 * successor indexes. Three walks over the mapped dump build it: ids and classes; each object's
 * class, shallow size and reference count; the references themselves (these two split over two
 * threads).
 */
#ifndef HEAP_GRAPH_H
#define HEAP_GRAPH_H

#include "mapped_dump.h"

#include <stdbool.h>
#include <stdint.h>

#define HG_NONE UINT32_MAX

struct hg_field {
    uint32_t off;     /* byte offset in the instance data of the dump */
    uint64_t name_id; /* field name string id */
};

struct hg_class {
    uint64_t id, super_id, name_id;
    uint64_t rec_off;    /* the CLASS DUMP sub-record's body in the mapping */
    uint32_t super;      /* class index, HG_NONE for none */
    uint32_t node;       /* the class object's node */
    uint32_t own_bytes;  /* instance data bytes of the fields this class declares (dump sizes) */
    uint32_t own_model;  /* the same fields in the size model */
    uint32_t inst_bytes; /* with the superclasses (dump sizes) */
    uint32_t shallow;    /* instance size in the model */
    uint32_t refs_off, nrefs; /* into heap_graph.fields: reference fields, supers included */
    uint32_t own_refs_off, own_nrefs; /* fields this class declares (before resolution) */
    bool is_reference; /* java.lang.ref.Reference or a subclass: its referent is weak */
    bool resolved;
    char *name; /* Java name: "java.util.ArrayList", "int[]", "java.lang.Object[]" */
};

struct hg_seg {
    uint32_t high;     /* the ids' high 32 bits */
    uint32_t first;    /* object index (node - first_obj) of its first id */
    uint32_t low_min;  /* the low half of its first id */
    unsigned shift;    /* bucket width: 2^shift */
    uint64_t bucket0;  /* its buckets start at bucket[bucket0] */
    uint64_t nbuckets; /* its buckets (bucket[bucket0 + nbuckets] ends the last) */
};

struct hg_thread {
    uint32_t serial;
    uint32_t object; /* node of the java.lang.Thread object, HG_NONE if not dumped */
};

struct hg_root {
    uint64_t id;
    uint32_t thread; /* serial for frame and JNI-local roots, 0 otherwise */
    uint8_t kind;    /* the sub-record tag */
};

struct heap_graph {
    struct mapped_dump m;
    unsigned oop_size;  /* reference size of the size model (4: compressed oops) */
    uint32_t n;         /* nodes, virtual ones included */
    uint32_t nthreads;  /* nodes 1..nthreads */
    uint32_t first_obj; /* 1 + nthreads */
    uint64_t nobjects;
    uint64_t *ids;      /* while loading: the ids, ascending (freed once ids32 and segs exist) */
    uint32_t *ids32;    /* ids32[node - first_obj]: the low half of the id, the high half in segs */
    uint32_t *cls;      /* class index per node (HG_NONE for virtual nodes) */
    uint32_t *shallow8; /* shallow size in units of 8 bytes (the model aligns to 8) */
    uint32_t *off;      /* CSR: successors of i are adj[off[i]..off[i+1]) (fewer than 2^32) */
    uint32_t *adj;
    uint64_t nrefs, object_refs, dangling, duplicates, weak_skipped; /* object_refs: between
                                                                       objects, roots left out */
    struct hg_class *classes;
    uint32_t nclasses, ndumped; /* ndumped: real CLASS DUMPs, sorted by id, first */
    size_t classes_cap, fields_cap;
    uint32_t class_class;    /* pseudo class of class objects ("java.lang.Class") */
    uint32_t prim_class[12]; /* pseudo classes of primitive arrays, by basic type */
    struct hg_field *fields;
    uint32_t nfields;
    struct hg_thread *threads;
    struct hg_root *roots;
    size_t nroots;
    /* lookup: the ids of one high half form a segment; within it, bucket[bucket0 + b] is the
     * first index whose (low half - low_min) >> shift is at least b */
    struct hg_seg *segs;
    uint32_t nsegs;
    uint32_t *bucket;
    uint64_t nbuckets; /* entries of bucket[] */
    bool progress;     /* phase and percent on stderr */
    bool phd;          /* loaded from a PHD file: no mapping (m is empty but for idsize),
                          roots inferred, no field names (heap_graph_phd.c) */
};

/*
 * Load dump number `which` of path (an HPROF file, plain or gzip, or an OpenJ9 PHD file). oop_size
 * is the size model's reference size (4 or 8). Returns 0, or -1 with a one-line message in err
 * (*bad_input: the file is at fault, exit 2).
 */
int heap_graph_load(struct heap_graph *g, const char *path, size_t which, unsigned oop_size,
                    bool progress, char *err, size_t errlen, bool *bad_input);
void heap_graph_free(struct heap_graph *g);
/* Free the references (off, adj) once nothing walks them any more (heap_analysis_run). */
void heap_graph_drop_edges(struct heap_graph *g);

/* A bucket index 16 times coarser (an eighth of a byte an object instead of two; each lookup
 * then takes four more steps of binary search): for after the graph is built, when lookups are
 * few. */
void heap_graph_coarsen_index(struct heap_graph *g);

/* The node of an object id, HG_NONE if the dump has no such object. */
uint32_t heap_graph_node(const struct heap_graph *g, uint64_t id);
/* The id of an object node (0 for virtual nodes): a binary search in the bucket index. */
uint64_t heap_graph_id(const struct heap_graph *g, uint32_t node);
/* The class index of a CLASS DUMP id, HG_NONE if none (heap_classes.c). */
uint32_t heap_classes_find(const struct heap_graph *g, uint64_t id);
/* The shallow size of a node in bytes. */
static inline uint64_t heap_graph_shallow(const struct heap_graph *g, uint32_t node)
{
    return (uint64_t)g->shallow8[node] << 3;
}
/* The name of a string id as a NUL-terminated copy in buf. */
const char *heap_graph_str(const struct heap_graph *g, uint64_t id, char *buf, size_t len);

/* The basic type size in the dump (2 = object: the id size), 0 if invalid. */
unsigned heap_graph_type_size(const struct heap_graph *g, unsigned type);

#endif
