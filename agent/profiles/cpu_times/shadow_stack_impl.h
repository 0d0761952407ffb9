/* The inside of a thread's cpu=times state (shadow_stack.c), shared with the fold of unloaded
 * classes' paths (shadow_fold.c) and the totals (shadow_totals.c, for hash_mix64) only: nothing
 * else may include it. */
#ifndef HPROF_SHADOW_STACK_IMPL_H
#define HPROF_SHADOW_STACK_IMPL_H

#include "hash_mix.h"
#include "shadow_stack.h"

/* Address-stable storage that grows by doubling chunks (64, 128, 256, ... elements), so
 * a thread that makes few traces costs little and readers never see an element move. */
#define CHUNK0_BITS 6
#define NCHUNKS 27 /* 64 << 26 elements: beyond any uint32_t index used here */

struct chunked {
    _Atomic(void *) chunk[NCHUNKS];
    _Atomic(uint32_t) count;
    size_t elem;
};

static inline unsigned chunk_of(uint32_t i, uint32_t *off)
{
    uint64_t x = (uint64_t)i + (1u << CHUNK0_BITS);
    unsigned k = 63u - (unsigned)__builtin_clzll(x); /* floor(log2(x)) >= CHUNK0_BITS */
    *off = (uint32_t)(x - (UINT64_C(1) << k));
    return k - CHUNK0_BITS;
}

static inline void *chunked_at(const struct chunked *c, uint32_t i)
{
    uint32_t off;
    unsigned k = chunk_of(i, &off);
    char *p = atomic_load_explicit(&((struct chunked *)c)->chunk[k], memory_order_acquire);
    return p + (size_t)off * c->elem;
}

struct entry {
    uint64_t key;               /* its frame | depth << 16: the key of its slot */
    struct shadow_node *node;   /* its top of stack: the parent of its callees' */
    struct shadow_child *slot;  /* the counters it feeds, in its caller's node... */
    struct shadow_child *table; /* ...as long as that node's table is this one */
    uint64_t start;             /* ticks at entry */
    uint64_t child;             /* elapsed ticks of the instrumented calls it made */
};

struct shadow_thread {
    struct entry *stack;
    uint32_t height, capacity;
    uint32_t overflow_height; /* entries not pushed above a full stack */
    pthread_mutex_t *grow_lock;
    struct shadow_node *root; /* node 0: the empty stack */

    struct shadow_node **keys; /* nodes by hash of their frames; NULL = empty */
    uint32_t key_mask, key_count;
    struct chunked nodes;

    bool per_method;
    uint32_t *method_slots; /* method indices by hash of frame; 0 = empty */
    uint32_t method_mask, method_count;
    struct chunked methods; /* index 0 unused */

    /* The fold of unloaded classes' paths (shadow_fold.c): called at a new path once the
     * thread holds fold_at nodes. */
    shadow_fold_hook fold_hook;
    void *fold_ctx;
    uint32_t fold_at;

    struct shadow_stats stats;
    _Atomic(size_t) bytes; /* every block below, as charged to mem_account */
};

#define NODE(t, i) ((struct shadow_node *)chunked_at(&(t)->nodes, (i)))
#define FRAME_BITS 0xFFFFFFFF0000FFFFull /* the frame in a key */

static inline uint32_t child_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

static inline struct shadow_child *find_child(const struct shadow_node *p, uint64_t key)
{
    if (!p->children)
        return NULL;
    for (uint32_t j = child_hash(key) & p->mask;; j = (j + 1) & p->mask) {
        struct shadow_child *c = &p->children[j];
        uint64_t k = atomic_load_explicit(&c->key, memory_order_relaxed);
        if (k == key)
            return c;
        if (!k)
            return NULL;
    }
}

/* The key of the overflow callee at the depth of key (its depth bits). */
static inline uint64_t overflow_key(uint64_t key)
{
    return SHADOW_FRAME_OVERFLOW | (key & ~FRAME_BITS);
}

/* Charges (add) or gives back a block of size bytes to t and to mem_account. */
void shadow_stack_account(struct shadow_thread *t, size_t size, bool add);
/* Reserves element count of c (zeroed) without publishing it; UINT32_MAX when out of memory. */
uint32_t shadow_stack_chunked_reserve(struct shadow_thread *t, struct chunked *c);
void shadow_stack_chunked_publish(struct chunked *c, uint32_t i);
void shadow_stack_chunked_free(struct shadow_thread *t, struct chunked *c);
/* The hash of node n's frames, as the keys index files it. */
uint64_t shadow_stack_node_hash(const struct shadow_node *n);

#endif
