/* The fold of unloaded classes' call paths (shadow_stack.h, shadow_fold_run): a server that
 * keeps loading and unloading classes would otherwise keep every path it ever ran, per thread.
 * A path that names a method of an unloaded class can never be on a stack again, so its
 * counters are final: they go to the totals (cut after the path's first gone frame, merged over
 * threads unless thread=y) and the nodes are rebuilt without it. Pure C like the stacks: whether a
 * class is gone is asked of the caller. */
#include "shadow_stack_impl.h"

#include <stdlib.h>
#include <string.h>

#include "mem_account.h"

#define NONE UINT32_MAX

/* What a fold knows of each old node, by its index. */
struct fold {
    struct shadow_thread *t;
    uint32_t n;       /* old nodes */
    uint32_t *parent; /* index of the parent, NONE */
    uint32_t *need;   /* frames of its chain a kept path reads through it (0: not kept) */
    uint32_t *index;  /* its index in the new nodes, NONE */
    uint8_t *live;    /* no gone frame in its path: it keeps its callee table */
    uint8_t *gone;    /* per cnum: 0 not asked, 1 live, 2 gone */
    uint32_t ncnum;
    shadow_gone_fn is_gone;
    void *ctx;
};

/* The index of node n of t (a node's address is in one chunk of t->nodes). */
static uint32_t index_of(const struct shadow_thread *t, const struct shadow_node *n)
{
    uintptr_t a = (uintptr_t)n;
    for (unsigned k = NCHUNKS; k-- > 0;) {
        uintptr_t base = (uintptr_t)atomic_load_explicit(
            &((struct shadow_thread *)t)->nodes.chunk[k], memory_order_relaxed);
        size_t size = ((size_t)1 << (k + CHUNK0_BITS)) * sizeof *n;
        if (base && a >= base && a < base + size)
            return (uint32_t)((1u << (k + CHUNK0_BITS)) - (1u << CHUNK0_BITS) +
                              (a - base) / sizeof *n);
    }
    return NONE;
}

static bool frame_gone(struct fold *f, shadow_frame fr)
{
    uint32_t cnum = SHADOW_CNUM(fr);
    if (cnum >= f->ncnum) /* the overflow frame */
        return false;
    if (!f->gone[cnum])
        f->gone[cnum] = f->is_gone(cnum, f->ctx) ? 2 : 1;
    return f->gone[cnum] == 2;
}

static void fold_free(struct fold *f)
{
    free(f->parent);
    free(f->need);
    free(f->index);
    free(f->live);
    free(f->gone);
}

/* Which nodes are live (no gone frame in their len frames, or on the stack) and which are kept
 * (live, or read as a frame of a kept path). Returns the nodes that are not live. */
static uint32_t mark(struct fold *f)
{
    struct shadow_thread *t = f->t;
    uint32_t *dist = f->need; /* first the distance to the nearest gone frame down the chain */
    uint32_t dead = 0;
    f->parent[0] = NONE;
    dist[0] = NONE;
    f->live[0] = 1;
    for (uint32_t i = 1; i < f->n; i++) {
        const struct shadow_node *nd = NODE(t, i);
        uint32_t p = nd->parent ? index_of(t, nd->parent) : NONE;
        f->parent[i] = p;
        /* a chain that ends early is a kept frame of a folded path (a holder): as gone */
        if (frame_gone(f, nd->frame))
            dist[i] = 0;
        else if (p == NONE)
            dist[i] = nd->len > 1 ? 1 : NONE;
        else
            dist[i] = dist[p] == NONE ? NONE : dist[p] + 1;
        f->live[i] = dist[i] == NONE || dist[i] >= nd->len;
    }
    for (uint32_t h = 0; h < t->height; h++) { /* on the stack: stays whatever it names */
        uint32_t i = index_of(t, t->stack[h].node);
        if (i != NONE)
            f->live[i] = 1;
    }
    for (uint32_t i = 0; i < f->n; i++) {
        dead += !f->live[i];
        f->need[i] = f->live[i] ? (i ? NODE(t, i)->len : 1) : 0;
    }
    for (uint32_t i = f->n; i-- > 1;)
        if (f->need[i] > 1 && f->parent[i] != NONE && f->need[f->parent[i]] < f->need[i] - 1)
            f->need[f->parent[i]] = f->need[i] - 1;
    return dead;
}

/* Whether the counters of slot c of old node i stay (both ends live). */
static bool slot_stays(const struct fold *f, uint32_t i, const struct shadow_child *c)
{
    if (!f->live[i])
        return false;
    uint32_t j = index_of(f->t, c->node);
    return j != NONE && f->live[j];
}

static size_t table_slots(uint32_t count)
{
    size_t s = 2;
    while (s < 2 * (size_t)count)
        s *= 2;
    return s;
}

/* The kept nodes copied to *nn (their callee tables with the slots that stay) and the keys
 * index *keys of the live ones. Returns false when out of memory (all of it freed). */
static bool build(struct fold *f, struct chunked *nn, struct shadow_node ***keys, uint32_t *kmask)
{
    struct shadow_thread *t = f->t;
    uint32_t nlive = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        f->index[i] = NONE;
        if (!f->need[i])
            continue;
        uint32_t j = shadow_stack_chunked_reserve(t, nn);
        if (j == NONE)
            goto fail;
        const struct shadow_node *o = NODE(t, i);
        struct shadow_node *d = chunked_at(nn, j);
        d->frame = o->frame;
        d->len = o->len;
        d->method = o->method;
        uint32_t p = f->parent[i];
        d->parent = p != NONE && f->index[p] != NONE ? chunked_at(nn, f->index[p]) : NULL;
        f->index[i] = j;
        shadow_stack_chunked_publish(nn, j);
        nlive += f->live[i] && i;
    }
    size_t ks = 64;
    while ((nlive + 1) * 2 > ks)
        ks *= 2;
    *keys = calloc(ks, sizeof **keys);
    if (!*keys)
        goto fail;
    shadow_stack_account(t, ks * sizeof **keys, true);
    *kmask = (uint32_t)(ks - 1);
    for (uint32_t i = 0; i < f->n; i++) {
        if (f->index[i] == NONE || !f->live[i])
            continue;
        const struct shadow_node *o = NODE(t, i);
        struct shadow_node *d = chunked_at(nn, f->index[i]);
        uint32_t count = 0;
        for (uint32_t s = 0; o->children && s <= o->mask; s++)
            count += atomic_load_explicit(&o->children[s].key, memory_order_relaxed) &&
                     slot_stays(f, i, &o->children[s]);
        if (count) {
            size_t slots = table_slots(count);
            d->children = calloc(slots, sizeof *d->children);
            if (!d->children)
                goto fail;
            shadow_stack_account(t, slots * sizeof *d->children, true);
            d->mask = (uint32_t)(slots - 1);
            d->count = count;
            for (uint32_t s = 0; s <= o->mask; s++) {
                const struct shadow_child *c = &o->children[s];
                uint64_t key = atomic_load_explicit(&c->key, memory_order_relaxed);
                if (!key || !slot_stays(f, i, c))
                    continue;
                uint32_t j = child_hash(key) & d->mask;
                while (atomic_load_explicit(&d->children[j].key, memory_order_relaxed))
                    j = (j + 1) & d->mask;
                struct shadow_child *e = &d->children[j];
                e->node = chunked_at(nn, f->index[index_of(t, c->node)]);
                atomic_store_explicit(&e->calls, atomic_load(&c->calls), memory_order_relaxed);
                atomic_store_explicit(&e->self, atomic_load(&c->self), memory_order_relaxed);
                atomic_store_explicit(&e->key, key, memory_order_relaxed);
            }
        }
        if (i) {
            uint32_t j = (uint32_t)shadow_stack_node_hash(d) & *kmask;
            while ((*keys)[j])
                j = (j + 1) & *kmask;
            (*keys)[j] = d;
        }
    }
    return true;
fail:
    for (uint32_t j = 0; j < atomic_load_explicit(&nn->count, memory_order_relaxed); j++) {
        struct shadow_node *d = chunked_at(nn, j);
        if (d->children)
            shadow_stack_account(t, (d->mask + (size_t)1) * sizeof *d->children, false);
        free(d->children);
    }
    shadow_stack_chunked_free(t, nn);
    if (*keys)
        shadow_stack_account(t, (*kmask + (size_t)1) * sizeof **keys, false);
    free(*keys);
    *keys = NULL;
    return false;
}

/* The counters of every slot that does not stay, to the totals. */
static int move_counts(struct fold *f, struct shadow_totals *to, uint32_t thread, uint64_t *rows)
{
    shadow_frame frames[SHADOW_MAX_DEPTH];
    int rc = 0;
    for (uint32_t i = 0; i < f->n; i++) {
        const struct shadow_node *o = NODE(f->t, i);
        for (uint32_t s = 0; o->children && s <= o->mask; s++) {
            const struct shadow_child *c = &o->children[s];
            if (!atomic_load_explicit(&c->key, memory_order_relaxed) || slot_stays(f, i, c))
                continue;
            uint64_t calls = atomic_load_explicit(&c->calls, memory_order_relaxed);
            uint64_t self = atomic_load_explicit(&c->self, memory_order_relaxed);
            if (!calls && !self)
                continue;
            size_t k = shadow_stack_frames_of(c->node, frames, SHADOW_MAX_DEPTH);
            /* Cut after the first gone frame: a trace that reaches it prints as the empty
             * trace, labelled by its top frame, whatever lies below; a dump at a smaller depth
             * that stops above it prints the same live frames. Below a live top, which class
             * it was does not print either (SHADOW_FRAME_UNLOADED). So the paths through
             * unloaded code merge into a row per gone method and per live prefix, exact. */
            for (size_t g = 0; g < k; g++)
                if (frame_gone(f, frames[g])) {
                    if (g > 0)
                        frames[g] = SHADOW_FRAME_UNLOADED;
                    k = g + 1;
                    break;
                }
            if (shadow_totals_add_count(to, thread, frames, (uint32_t)k, calls, self) != 0)
                rc = -1;
            ++*rows;
        }
    }
    return rc;
}

/* The stack's entries point at the new nodes and slots. */
static void remap_stack(struct fold *f, struct chunked *nn)
{
    struct shadow_thread *t = f->t;
    for (uint32_t h = 0; h < t->height; h++) {
        struct entry *e = &t->stack[h];
        struct shadow_node *p = h ? t->stack[h - 1].node : chunked_at(nn, 0);
        e->node = chunked_at(nn, f->index[index_of(t, e->node)]);
        struct shadow_child *c = find_child(p, e->key);
        if (!c || c->node != e->node)
            c = find_child(p, overflow_key(e->key));
        e->slot = c;
        e->table = p->children;
    }
}

int shadow_fold_run(struct shadow_thread *t, struct shadow_totals *to, uint32_t thread,
                    shadow_gone_fn gone, void *ctx, uint32_t min_nodes,
                    struct shadow_fold_result *res)
{
    struct fold f = {.t = t, .n = shadow_stack_node_count(t), .is_gone = gone, .ctx = ctx};
    struct shadow_fold_result r = {.nodes_before = f.n, .nodes_after = f.n};
    for (uint32_t i = 1; i < f.n; i++) {
        uint32_t c = SHADOW_CNUM(NODE(t, i)->frame);
        if (c != UINT32_MAX && c >= f.ncnum)
            f.ncnum = c + 1;
    }
    f.parent = malloc(sizeof *f.parent * f.n);
    f.need = malloc(sizeof *f.need * f.n);
    f.index = malloc(sizeof *f.index * f.n);
    f.live = malloc(f.n);
    f.gone = calloc(f.ncnum ? f.ncnum : 1, 1);
    int rc = 0;
    if (!f.parent || !f.need || !f.index || !f.live || !f.gone) {
        rc = -1;
        goto out;
    }
    if (mark(&f) == 0)
        goto out;
    struct chunked nn = {.elem = sizeof(struct shadow_node)};
    struct shadow_node **keys = NULL;
    uint32_t kmask = 0;
    if (!build(&f, &nn, &keys, &kmask)) {
        rc = -1;
        goto out;
    }
    remap_stack(&f, &nn);
    struct chunked old = {.elem = sizeof(struct shadow_node)};
    struct shadow_node **old_keys = t->keys;
    uint32_t old_mask = t->key_mask;
    if (t->grow_lock)
        pthread_mutex_lock(t->grow_lock);
    rc = move_counts(&f, to, thread, &r.rows);
    for (unsigned k = 0; k < NCHUNKS; k++) {
        atomic_store_explicit(&old.chunk[k], atomic_load(&t->nodes.chunk[k]), memory_order_relaxed);
        atomic_store_explicit(&t->nodes.chunk[k], atomic_load(&nn.chunk[k]), memory_order_relaxed);
    }
    atomic_store_explicit(&t->nodes.count, atomic_load(&nn.count), memory_order_release);
    t->root = chunked_at(&t->nodes, 0);
    t->keys = keys;
    t->key_mask = kmask;
    t->key_count = 0;
    for (uint32_t i = 1; i < f.n; i++)
        t->key_count += f.index[i] != NONE && f.live[i];
    if (t->grow_lock)
        pthread_mutex_unlock(t->grow_lock);
    r.nodes_after = atomic_load(&nn.count);
    for (uint32_t i = 0; i < f.n; i++) {
        struct shadow_node *o = chunked_at(&old, i);
        if (o->children)
            shadow_stack_account(t, (o->mask + (size_t)1) * sizeof *o->children, false);
        free(o->children);
    }
    shadow_stack_chunked_free(t, &old);
    shadow_stack_account(t, (old_mask + (size_t)1) * sizeof *old_keys, false);
    free(old_keys);
out:
    fold_free(&f);
    t->fold_at = r.nodes_after <= UINT32_MAX / 2 && r.nodes_after * 2 > min_nodes
                     ? r.nodes_after * 2
                     : min_nodes;
    if (res)
        *res = r;
    return rc;
}
