/* The totals of cpu=times: every thread's counters (shadow_stack.c) summed per trace and per
 * method at a dump, keyed by (thread, frames). Pure C, like the stacks. */
#include "shadow_stack_impl.h"

#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "mem_account.h"
#include "segarray.h"

/* ---- totals ---------------------------------------------------------------------------- */

/* Rows never move (a segarray); their frame lists are in chunks of their own, and the index
 * holds row numbers: about 90 bytes a row of 4 frames, as the ended threads' totals keep one
 * per path ever run (issue 31). */
#define FRAMES_CHUNK (64 * 1024)

struct frames_chunk {
    struct frames_chunk *next;
    size_t used, size;
    shadow_frame data[];
};

struct shadow_totals {
    struct segarray rows; /* struct shadow_total */
    uint32_t *index;      /* row + 1 by hash of (thread, n, frames); 0 = empty */
    size_t index_mask;
    struct frames_chunk *chunks;
    size_t bytes;                    /* the index and the frame chunks, as charged */
    struct keymap *methods_by_frame; /* frame -> index + 1 */
    struct shadow_method_total *methods;
    size_t nmethods, mcap;
};

static void charge(struct shadow_totals *s, size_t size, bool add)
{
    size_t b = mem_block(size);
    if (add) {
        s->bytes += b;
        mem_account_charge(b);
    } else {
        s->bytes -= b;
        mem_account_uncharge(b);
    }
}

struct shadow_totals *shadow_totals_new(void)
{
    struct shadow_totals *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    segarray_init(&s->rows, sizeof(struct shadow_total));
    s->index_mask = 255;
    s->index = calloc(s->index_mask + 1, sizeof *s->index);
    s->methods_by_frame = keymap_new(1024);
    if (!s->index || !s->methods_by_frame) {
        shadow_totals_free(s);
        return NULL;
    }
    charge(s, (s->index_mask + 1) * sizeof *s->index, true);
    return s;
}

void shadow_totals_free(struct shadow_totals *s)
{
    if (!s)
        return;
    segarray_free(&s->rows);
    for (struct frames_chunk *c = s->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    mem_account_uncharge(s->bytes);
    free(s->index);
    free(s->methods);
    keymap_free(s->methods_by_frame);
    free(s);
}

size_t shadow_totals_bytes(const struct shadow_totals *s)
{
    return segarray_bytes((struct segarray *)&s->rows) + s->bytes +
           keymap_bytes(s->methods_by_frame) + s->mcap * sizeof *s->methods;
}

static uint64_t row_hash(uint32_t thread, const shadow_frame *frames, uint32_t n)
{
    uint64_t h = hash_mix64(((uint64_t)thread << 32 | n) + 1);
    for (uint32_t k = 0; k < n; k++)
        h = hash_mix64(h ^ frames[k]);
    return h;
}

/* Room for n frames (at least one, so a row's list is never NULL), or NULL. */
static shadow_frame *frames_alloc(struct shadow_totals *s, uint32_t n)
{
    size_t want = n ? n : 1;
    struct frames_chunk *c = s->chunks;
    if (!c || c->size - c->used < want) {
        size_t size = want > FRAMES_CHUNK / sizeof *c->data ? want : FRAMES_CHUNK / sizeof *c->data;
        c = malloc(sizeof *c + size * sizeof *c->data);
        if (!c)
            return NULL;
        charge(s, sizeof *c + size * sizeof *c->data, true);
        c->used = 0;
        c->size = size;
        c->next = s->chunks;
        s->chunks = c;
    }
    shadow_frame *f = c->data + c->used;
    c->used += want;
    return f;
}

static bool grow_index(struct shadow_totals *s)
{
    size_t mask = s->index_mask * 2 + 1;
    uint32_t *index = calloc(mask + 1, sizeof *index);
    if (!index)
        return false;
    for (size_t j = 0; j <= s->index_mask; j++) {
        uint32_t v = s->index[j];
        if (!v)
            continue;
        const struct shadow_total *r = segarray_at(&s->rows, v - 1);
        size_t k = row_hash(r->thread, r->frames, r->n) & mask;
        while (index[k])
            k = (k + 1) & mask;
        index[k] = v;
    }
    charge(s, (s->index_mask + 1) * sizeof *index, false);
    charge(s, (mask + 1) * sizeof *index, true);
    free(s->index);
    s->index = index;
    s->index_mask = mask;
    return true;
}

static int add_row(struct shadow_totals *s, uint32_t thread, const shadow_frame *frames, uint32_t n,
                   uint64_t calls, uint64_t self)
{
    uint64_t h = row_hash(thread, frames, n);
    size_t j = h & s->index_mask;
    for (uint32_t v; (v = s->index[j]) != 0; j = (j + 1) & s->index_mask) {
        struct shadow_total *r = segarray_at(&s->rows, v - 1);
        if (r->thread == thread && r->n == n &&
            (!n || memcmp(r->frames, frames, sizeof *frames * n) == 0)) {
            r->calls += calls;
            r->self += self;
            return 0;
        }
    }
    uint32_t count = segarray_count(&s->rows);
    if (((size_t)count + 1) * 2 > s->index_mask + 1) {
        if (!grow_index(s))
            return -1;
        j = h & s->index_mask;
        while (s->index[j])
            j = (j + 1) & s->index_mask;
    }
    shadow_frame *copy = frames_alloc(s, n);
    uint32_t i = copy ? segarray_append(&s->rows) : UINT32_MAX;
    if (i == UINT32_MAX)
        return -1;
    struct shadow_total *r = segarray_at(&s->rows, i);
    if (n)
        memcpy(copy, frames, sizeof *frames * n);
    r->thread = thread;
    r->n = n;
    r->frames = copy;
    r->calls = calls;
    r->self = self;
    s->index[j] = i + 1;
    return 0;
}

static struct shadow_method_total *method_total(struct shadow_totals *s, shadow_frame f)
{
    uint32_t v = 0;
    if (keymap_get(s->methods_by_frame, &f, sizeof f, &v))
        return &s->methods[v - 1];
    if (s->nmethods == s->mcap) {
        size_t cap = s->mcap ? s->mcap * 2 : 256;
        struct shadow_method_total *m = realloc(s->methods, sizeof *m * cap);
        if (!m)
            return NULL;
        s->methods = m;
        s->mcap = cap;
    }
    if (!keymap_put(s->methods_by_frame, &f, sizeof f, (uint32_t)s->nmethods + 1))
        return NULL;
    struct shadow_method_total *m = &s->methods[s->nmethods++];
    memset(m, 0, sizeof *m);
    m->frame = f;
    return m;
}

/* A row's counts, and the same to the method of its frame f. */
static int add_count(struct shadow_totals *s, uint32_t thread, const shadow_frame *frames,
                     uint32_t n, shadow_frame f, uint64_t calls, uint64_t self)
{
    int rc = add_row(s, thread, frames, n, calls, self);
    struct shadow_method_total *m = method_total(s, f);
    if (!m)
        return -1;
    m->calls += calls;
    m->self += self;
    return rc;
}

int shadow_totals_add_count(struct shadow_totals *s, uint32_t thread, const shadow_frame *frames,
                            uint32_t n, uint64_t calls, uint64_t self)
{
    return n ? add_count(s, thread, frames, n, frames[0], calls, self) : -1;
}

int shadow_totals_add_thread(struct shadow_totals *s, const struct shadow_thread *t,
                             uint32_t thread, unsigned depth)
{
    if (depth > SHADOW_MAX_DEPTH)
        depth = SHADOW_MAX_DEPTH;
    shadow_frame frames[SHADOW_MAX_DEPTH];
    int rc = 0;
    uint32_t nodes = shadow_stack_node_count(t);
    for (uint32_t i = 0; i < nodes; i++) {
        const struct shadow_node *p = shadow_stack_node_at(t, i);
        for (uint32_t j = 0; p->children && j <= p->mask; j++) {
            const struct shadow_child *c = &p->children[j];
            if (!atomic_load_explicit(&c->key, memory_order_acquire))
                continue;
            uint64_t calls = atomic_load_explicit(&c->calls, memory_order_relaxed);
            uint64_t self = atomic_load_explicit(&c->self, memory_order_relaxed);
            if (!calls && !self)
                continue;
            size_t k = shadow_stack_frames_of(c->node, frames, depth);
            if (add_count(s, thread, frames, (uint32_t)k, c->node->frame, calls, self) != 0)
                rc = -1;
        }
    }
    uint32_t nm = shadow_stack_method_count(t);
    for (uint32_t i = 1; i < nm; i++) {
        const struct shadow_method *sm = shadow_stack_method_at(t, i);
        struct shadow_method_total *m = method_total(s, sm->frame);
        if (!m) {
            rc = -1;
            continue;
        }
        m->total += atomic_load_explicit(&sm->total, memory_order_relaxed);
    }
    return rc;
}

int shadow_totals_add_totals(struct shadow_totals *dst, const struct shadow_totals *src,
                             unsigned depth)
{
    int rc = 0;
    for (size_t i = 0; i < shadow_totals_count(src); i++) {
        const struct shadow_total *r = shadow_totals_at(src, i);
        uint32_t n = r->n < depth ? r->n : depth;
        if (add_row(dst, r->thread, r->frames, n, r->calls, r->self) != 0)
            rc = -1;
    }
    for (size_t i = 0; i < src->nmethods; i++) {
        const struct shadow_method_total *sm = &src->methods[i];
        struct shadow_method_total *m = method_total(dst, sm->frame);
        if (!m) {
            rc = -1;
            continue;
        }
        m->calls += sm->calls;
        m->self += sm->self;
        m->total += sm->total;
    }
    return rc;
}

size_t shadow_totals_count(const struct shadow_totals *s)
{
    return segarray_count((struct segarray *)&s->rows);
}

const struct shadow_total *shadow_totals_at(const struct shadow_totals *s, size_t i)
{
    return segarray_at((struct segarray *)&s->rows, (uint32_t)i);
}

size_t shadow_totals_method_count(const struct shadow_totals *s)
{
    return s->nmethods;
}

const struct shadow_method_total *shadow_totals_method_at(const struct shadow_totals *s, size_t i)
{
    return &s->methods[i];
}
