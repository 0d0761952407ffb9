#include "shadow_stack_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "mem_account.h"

/* Every block a thread's state allocates or frees goes through here, so the memory report and
 * the budget see it. */
void shadow_stack_account(struct shadow_thread *t, size_t size, bool add)
{
    size_t b = mem_block(size);
    if (add) {
        atomic_fetch_add_explicit(&t->bytes, b, memory_order_relaxed);
        mem_account_charge(b);
    } else {
        atomic_fetch_sub_explicit(&t->bytes, b, memory_order_relaxed);
        mem_account_uncharge(b);
    }
}

uint32_t shadow_stack_chunked_reserve(struct shadow_thread *t, struct chunked *c)
{
    uint32_t i = atomic_load_explicit(&c->count, memory_order_relaxed);
    uint32_t off;
    unsigned k = chunk_of(i, &off);
    if (k >= NCHUNKS)
        return UINT32_MAX;
    if (!atomic_load_explicit(&c->chunk[k], memory_order_relaxed)) {
        void *p = calloc((size_t)1 << (k + CHUNK0_BITS), c->elem); /* chunk k: 64 << k */
        if (!p)
            return UINT32_MAX;
        shadow_stack_account(t, ((size_t)1 << (k + CHUNK0_BITS)) * c->elem, true);
        atomic_store_explicit(&c->chunk[k], p, memory_order_release);
    }
    return i;
}

void shadow_stack_chunked_publish(struct chunked *c, uint32_t i)
{
    atomic_store_explicit(&c->count, i + 1, memory_order_release);
}

void shadow_stack_chunked_free(struct shadow_thread *t, struct chunked *c)
{
    for (unsigned k = 0; k < NCHUNKS; k++) {
        void *p = atomic_load_explicit(&c->chunk[k], memory_order_relaxed);
        if (p)
            shadow_stack_account(t, ((size_t)1 << (k + CHUNK0_BITS)) * c->elem, false);
        free(p);
    }
}

size_t shadow_stack_thread_bytes(const struct shadow_thread *t)
{
    return atomic_load_explicit(&((struct shadow_thread *)t)->bytes, memory_order_relaxed);
}

#define METHOD(t, i) ((struct shadow_method *)chunked_at(&(t)->methods, (i)))

static inline uint64_t child_key(shadow_frame f, unsigned depth)
{
    return f | (uint64_t)depth << 16;
}

static void lock(struct shadow_thread *t)
{
    if (t->grow_lock)
        pthread_mutex_lock(t->grow_lock);
}

static void unlock(struct shadow_thread *t)
{
    if (t->grow_lock)
        pthread_mutex_unlock(t->grow_lock);
}

struct shadow_thread *shadow_stack_thread_new(bool per_method, pthread_mutex_t *grow_lock)
{
    struct shadow_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->grow_lock = grow_lock;
    t->nodes.elem = sizeof(struct shadow_node);
    t->methods.elem = sizeof(struct shadow_method);
    t->per_method = per_method;
    t->capacity = 64;
    t->stack = malloc(sizeof *t->stack * t->capacity);
    t->key_mask = 63;
    t->keys = calloc(t->key_mask + 1, sizeof *t->keys);
    shadow_stack_account(t, sizeof *t, true);
    shadow_stack_account(t, sizeof *t->stack * t->capacity, true);
    shadow_stack_account(t, sizeof *t->keys * (t->key_mask + 1), true);
    if (per_method) {
        t->method_mask = 63;
        t->method_slots = calloc(t->method_mask + 1, sizeof *t->method_slots);
        shadow_stack_account(t, sizeof *t->method_slots * (t->method_mask + 1), true);
    }
    /* node 0: the empty stack; method 0: unused */
    uint32_t n0 = shadow_stack_chunked_reserve(t, &t->nodes);
    uint32_t m0 = per_method ? shadow_stack_chunked_reserve(t, &t->methods) : 0;
    if (!t->stack || !t->keys || (per_method && !t->method_slots) || n0 != 0 || m0 != 0) {
        shadow_stack_thread_free(t);
        return NULL;
    }
    t->root = NODE(t, 0);
    shadow_stack_chunked_publish(&t->nodes, 0);
    if (per_method)
        shadow_stack_chunked_publish(&t->methods, 0);
    return t;
}

void shadow_stack_thread_free(struct shadow_thread *t)
{
    if (!t)
        return;
    uint32_t n = atomic_load_explicit(&t->nodes.count, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        free(NODE(t, i)->children);
    free(t->stack);
    free(t->keys);
    free(t->method_slots);
    shadow_stack_chunked_free(t, &t->nodes);
    shadow_stack_chunked_free(t, &t->methods);
    /* What is left is what the frees above did not count one by one. */
    mem_account_uncharge(atomic_load_explicit(&t->bytes, memory_order_relaxed));
    free(t);
}

void shadow_stack_set_fold_hook(struct shadow_thread *t, shadow_fold_hook hook, void *ctx,
                                uint32_t min_nodes)
{
    t->fold_hook = hook;
    t->fold_ctx = ctx;
    t->fold_at = min_nodes;
}

uint32_t shadow_stack_height(const struct shadow_thread *t)
{
    return t->height;
}
struct shadow_stats shadow_stack_thread_stats(const struct shadow_thread *t)
{
    return t->stats;
}

uint32_t shadow_stack_node_count(const struct shadow_thread *t)
{
    return atomic_load_explicit(&((struct shadow_thread *)t)->nodes.count, memory_order_acquire);
}

const struct shadow_node *shadow_stack_node_at(const struct shadow_thread *t, uint32_t i)
{
    return NODE(t, i);
}

uint32_t shadow_stack_method_count(const struct shadow_thread *t)
{
    if (!t->per_method)
        return 0;
    return atomic_load_explicit(&((struct shadow_thread *)t)->methods.count, memory_order_acquire);
}

const struct shadow_method *shadow_stack_method_at(const struct shadow_thread *t, uint32_t i)
{
    return METHOD(t, i);
}

size_t shadow_stack_frames_of(const struct shadow_node *node, shadow_frame *out, size_t max)
{
    size_t n = 0, len = node->len;
    for (; node && n < len && n < max; node = node->parent)
        out[n++] = node->frame;
    return n;
}

size_t shadow_stack_node_frames(const struct shadow_thread *t, uint32_t i, shadow_frame *out,
                                size_t max)
{
    return shadow_stack_frames_of(NODE(t, i), out, max);
}

/* ---- slow paths: a new callee, a new top of stack, a new method, growth ----------------- */

static uint64_t key_hash_of_stack(const struct shadow_thread *t, shadow_frame f, uint32_t len)
{
    uint64_t h = hash_mix64(f ^ len);
    for (uint32_t k = 1; k < len; k++)
        h = hash_mix64(h ^ (t->stack[t->height - k].key & FRAME_BITS));
    return h;
}

uint64_t shadow_stack_node_hash(const struct shadow_node *n)
{
    uint32_t len = n->len;
    uint64_t h = hash_mix64(n->frame ^ len);
    const struct shadow_node *p = n->parent;
    for (uint32_t k = 1; k < len; k++, p = p->parent)
        h = hash_mix64(h ^ p->frame);
    return h;
}

/* Whether node n is (f, then the top len-1 frames of the stack). */
static bool node_matches_stack(const struct shadow_thread *t, const struct shadow_node *n,
                               shadow_frame f, uint32_t len)
{
    if (n->len != len || n->frame != f)
        return false;
    const struct shadow_node *p = n->parent;
    for (uint32_t k = 1; k < len; k++, p = p->parent)
        if (p->frame != (t->stack[t->height - k].key & FRAME_BITS))
            return false;
    return true;
}

static bool grow_keys(struct shadow_thread *t)
{
    uint32_t mask = t->key_mask * 2 + 1;
    struct shadow_node **keys = calloc((size_t)mask + 1, sizeof *keys);
    if (!keys)
        return false;
    for (uint32_t s = 0; s <= t->key_mask; s++) {
        struct shadow_node *n = t->keys[s];
        if (!n)
            continue;
        uint32_t j = (uint32_t)shadow_stack_node_hash(n) & mask;
        while (keys[j])
            j = (j + 1) & mask;
        keys[j] = n;
    }
    free(t->keys);
    shadow_stack_account(t, sizeof *keys * (t->key_mask + 1), false);
    shadow_stack_account(t, sizeof *keys * ((size_t)mask + 1), true);
    t->keys = keys;
    t->key_mask = mask;
    return true;
}

static uint32_t method_of(struct shadow_thread *t, shadow_frame f)
{
    uint32_t j = (uint32_t)hash_mix64(f) & t->method_mask;
    for (uint32_t i; (i = t->method_slots[j]) != 0; j = (j + 1) & t->method_mask)
        if (METHOD(t, i)->frame == f)
            return i;
    if ((t->method_count + 1) * 2 > t->method_mask + 1) {
        uint32_t mask = t->method_mask * 2 + 1;
        uint32_t *slots = calloc((size_t)mask + 1, sizeof *slots);
        if (!slots)
            return 0;
        for (uint32_t s = 0; s <= t->method_mask; s++) {
            uint32_t i = t->method_slots[s];
            if (!i)
                continue;
            uint32_t k = (uint32_t)hash_mix64(METHOD(t, i)->frame) & mask;
            while (slots[k])
                k = (k + 1) & mask;
            slots[k] = i;
        }
        free(t->method_slots);
        shadow_stack_account(t, sizeof *slots * (t->method_mask + 1), false);
        shadow_stack_account(t, sizeof *slots * ((size_t)mask + 1), true);
        t->method_slots = slots;
        t->method_mask = mask;
        j = (uint32_t)hash_mix64(f) & mask;
        while (slots[j])
            j = (j + 1) & mask;
    }
    uint32_t i = shadow_stack_chunked_reserve(t, &t->methods);
    if (i == UINT32_MAX)
        return 0;
    METHOD(t, i)->frame = f;
    shadow_stack_chunked_publish(&t->methods, i);
    t->method_slots[j] = i;
    t->method_count++;
    return i;
}

/* The node for (f on top of the current stack, depth frames at most), created if new; NULL
 * when out of memory. */
static struct shadow_node *find_or_add_node(struct shadow_thread *t, shadow_frame f,
                                            struct shadow_node *parent, unsigned depth)
{
    uint32_t len = t->height + 1 < depth ? t->height + 1 : depth;
    uint64_t h = key_hash_of_stack(t, f, len);
    uint32_t j = (uint32_t)h & t->key_mask;
    for (struct shadow_node *n; (n = t->keys[j]) != NULL; j = (j + 1) & t->key_mask)
        if (node_matches_stack(t, n, f, len))
            return n;
    if ((t->key_count + 1) * 2 > t->key_mask + 1) {
        if (!grow_keys(t))
            return NULL;
        j = (uint32_t)h & t->key_mask;
        while (t->keys[j])
            j = (j + 1) & t->key_mask;
    }
    uint32_t method = 0;
    if (t->per_method && (method = method_of(t, f)) == 0)
        return NULL;
    uint32_t i = shadow_stack_chunked_reserve(t, &t->nodes);
    if (i == UINT32_MAX)
        return NULL;
    struct shadow_node *n = NODE(t, i);
    n->frame = f;
    n->parent = len > 1 ? parent : NULL;
    n->len = len;
    n->method = method;
    shadow_stack_chunked_publish(&t->nodes, i);
    t->keys[j] = n;
    t->key_count++;
    return n;
}

/* Doubles p's callee table (readers hold grow_lock, so the old one can be freed). Entries on
 * the stack that point into the old table find their slot again at exit. */
static bool grow_children(struct shadow_thread *t, struct shadow_node *p)
{
    uint32_t mask = p->mask ? p->mask * 2 + 1 : 1;
    struct shadow_child *c = calloc((size_t)mask + 1, sizeof *c);
    if (!c)
        return false;
    if (p->children) {
        for (uint32_t s = 0; s <= p->mask; s++) {
            struct shadow_child *o = &p->children[s];
            uint64_t key = atomic_load_explicit(&o->key, memory_order_relaxed);
            if (!key)
                continue;
            uint32_t j = child_hash(key) & mask;
            while (atomic_load_explicit(&c[j].key, memory_order_relaxed))
                j = (j + 1) & mask;
            c[j].node = o->node;
            atomic_store_explicit(&c[j].calls, atomic_load(&o->calls), memory_order_relaxed);
            atomic_store_explicit(&c[j].self, atomic_load(&o->self), memory_order_relaxed);
            atomic_store_explicit(&c[j].key, key, memory_order_relaxed);
        }
    }
    lock(t);
    struct shadow_child *old = p->children;
    p->children = c;
    p->mask = mask;
    unlock(t);
    free(old);
    if (old)
        shadow_stack_account(t, sizeof *c * (p->mask / 2 + 1), false);
    shadow_stack_account(t, sizeof *c * ((size_t)mask + 1), true);
    return true;
}

/* A callee seen from p for the first time: its slot (counters zero), or NULL. */
static struct shadow_child *__attribute__((noinline))
add_child(struct shadow_thread *t, struct shadow_node *p, uint64_t key, shadow_frame f,
          unsigned depth)
{
    struct shadow_node *n = find_or_add_node(t, f, p, depth);
    if (!n)
        return NULL;
    /* at most half full; a table of 2 holds 1 */
    if ((p->count + 1) * 2 > p->mask + 1 && !grow_children(t, p))
        return NULL;
    uint32_t j = child_hash(key) & p->mask;
    while (atomic_load_explicit(&p->children[j].key, memory_order_relaxed))
        j = (j + 1) & p->mask;
    struct shadow_child *c = &p->children[j];
    c->node = n;
    atomic_store_explicit(&c->key, key, memory_order_release); /* readers see it whole */
    p->count++;
    return c;
}

/* Past the budget: the slot that counts a call of a callee new to p. From a real node, its
 * overflow callee (one node per node); from an overflow node, that node itself, so nothing
 * below it grows. NULL when out of memory. */
static struct shadow_child *overflow_child(struct shadow_thread *t, struct shadow_node *p,
                                           uint64_t key, unsigned depth)
{
    uint64_t k = overflow_key(key);
    struct shadow_child *c = find_child(p, k);
    if (c)
        return c;
    if (p == t->root || p->frame != SHADOW_FRAME_OVERFLOW)
        return add_child(t, p, k, SHADOW_FRAME_OVERFLOW, depth);
    if ((p->count + 1) * 2 > p->mask + 1 && !grow_children(t, p))
        return NULL;
    uint32_t j = child_hash(k) & p->mask;
    while (atomic_load_explicit(&p->children[j].key, memory_order_relaxed))
        j = (j + 1) & p->mask;
    c = &p->children[j];
    c->node = p;
    atomic_store_explicit(&c->key, k, memory_order_release);
    p->count++;
    return c;
}

static bool grow_stack(struct shadow_thread *t)
{
    if (t->capacity >= SHADOW_MAX_HEIGHT)
        return false;
    uint32_t cap = t->capacity * 2;
    struct entry *s = realloc(t->stack, sizeof *s * cap);
    if (!s)
        return false;
    shadow_stack_account(t, sizeof *s * t->capacity, false);
    shadow_stack_account(t, sizeof *s * cap, true);
    t->stack = s;
    t->capacity = cap;
    return true;
}

/* ---- the hot path -------------------------------------------------------------------- */

static inline void add_relaxed(_Atomic(uint64_t) *c, uint64_t v)
{
    /* only the owner writes: a plain load and store, not a locked add */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* A callee new to *p: a fold first when one is due (it moves *p), then its slot. */
static struct shadow_child *__attribute__((noinline))
new_child(struct shadow_thread *t, struct shadow_node **p, uint64_t key, shadow_frame f,
          unsigned depth)
{
    uint32_t nodes = shadow_stack_node_count(t);
    if (t->fold_hook && nodes >= t->fold_at) {
        t->fold_at = nodes <= UINT32_MAX / 2 ? nodes * 2 : UINT32_MAX;
        t->fold_hook(t, t->fold_ctx);
        *p = t->height ? t->stack[t->height - 1].node : t->root;
    }
    return mem_account_budget_reached("new call paths") ? overflow_child(t, *p, key, depth)
                                                        : add_child(t, *p, key, f, depth);
}

void shadow_stack_enter(struct shadow_thread *t, shadow_frame f, uint64_t now, unsigned depth)
{
    if (t->overflow_height || (t->height == t->capacity && !grow_stack(t))) {
        t->overflow_height++;
        t->stats.overflow++;
        return;
    }
    depth = depth < 1 ? 1 : depth > SHADOW_MAX_DEPTH ? SHADOW_MAX_DEPTH : depth;
    struct shadow_node *p = t->height ? t->stack[t->height - 1].node : t->root;
    uint64_t key = child_key(f, depth);
    struct shadow_child *c = find_child(p, key);
    if (__builtin_expect(!c, 0) && !(c = new_child(t, &p, key, f, depth))) {
        t->overflow_height++;
        t->stats.overflow++;
        return;
    }
    add_relaxed(&c->calls, 1);
    if (t->per_method && c->node->method)
        METHOD(t, c->node->method)->active++;
    t->stack[t->height++] =
        (struct entry){.key = key, .node = c->node, .slot = c, .table = p->children, .start = now};
}

/* Pops the top entry at now: its self time to its counters, its elapsed time to its caller. */
static inline void pop(struct shadow_thread *t, uint64_t now)
{
    struct entry *e = &t->stack[--t->height];
    uint64_t elapsed = now > e->start ? now - e->start : 0;
    uint64_t self = elapsed > e->child ? elapsed - e->child : 0;
    struct shadow_node *p = t->height ? t->stack[t->height - 1].node : t->root;
    struct shadow_child *c = e->slot;
    if (__builtin_expect(p->children != e->table, 0)) { /* the caller's table grew meanwhile */
        c = find_child(p, e->key);
        if (!c || c->node != e->node) /* counted under the overflow callee */
            c = find_child(p, overflow_key(e->key));
    }
    if (c)
        add_relaxed(&c->self, self);
    if (t->per_method && e->node->method) {
        struct shadow_method *m = METHOD(t, e->node->method);
        if (--m->active == 0)
            add_relaxed(&m->total, elapsed);
    }
    if (t->height)
        t->stack[t->height - 1].child += elapsed;
}

void shadow_stack_exit(struct shadow_thread *t, shadow_frame f, uint64_t now)
{
    if (t->overflow_height) {
        t->overflow_height--;
        return;
    }
    if (t->height && (t->stack[t->height - 1].key & FRAME_BITS) == f) {
        pop(t, now);
        return;
    }
    uint32_t i = t->height;
    while (i > 0 && (t->stack[i - 1].key & FRAME_BITS) != f)
        i--;
    if (i == 0) {
        t->stats.unmatched_exits++;
        return;
    }
    while (t->height > i) {
        pop(t, now);
        t->stats.unwound++;
    }
    pop(t, now);
}
