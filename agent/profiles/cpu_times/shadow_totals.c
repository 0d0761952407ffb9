/* The totals of cpu=times: every thread's counters (shadow_stack.c) summed per trace and per
 * method at a dump, keyed by (thread, frames). Pure C, like the stacks. */
#include "shadow_stack.h"

#include <stdlib.h>
#include <string.h>

#include "keymap.h"
#include "mem_account.h"

/* ---- totals ---------------------------------------------------------------------------- */

struct shadow_totals {
    struct keymap *rows_by_key; /* (thread, n, frames) -> index + 1 */
    struct shadow_total *rows;
    size_t nrows, cap;
    struct keymap *methods_by_frame; /* frame -> index + 1 */
    struct shadow_method_total *methods;
    size_t nmethods, mcap;
};

struct shadow_totals *shadow_totals_new(void)
{
    struct shadow_totals *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->rows_by_key = keymap_new(1024);
    s->methods_by_frame = keymap_new(1024);
    if (!s->rows_by_key || !s->methods_by_frame) {
        shadow_totals_free(s);
        return NULL;
    }
    return s;
}

void shadow_totals_free(struct shadow_totals *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nrows; i++)
        free(s->rows[i].frames);
    free(s->rows);
    free(s->methods);
    keymap_free(s->rows_by_key);
    keymap_free(s->methods_by_frame);
    free(s);
}

size_t shadow_totals_bytes(const struct shadow_totals *s)
{
    size_t b = keymap_bytes(s->rows_by_key) + keymap_bytes(s->methods_by_frame);
    b += s->cap * sizeof *s->rows + s->mcap * sizeof *s->methods;
    for (size_t i = 0; i < s->nrows; i++)
        b += mem_block(sizeof *s->rows[i].frames * (s->rows[i].n ? s->rows[i].n : 1));
    return b;
}

static int add_row(struct shadow_totals *s, uint32_t thread, const shadow_frame *frames, uint32_t n,
                   uint64_t calls, uint64_t self)
{
    uint8_t small[8 + 8 * 64];
    size_t len = 8 + sizeof *frames * n;
    uint8_t *key = len <= sizeof small ? small : malloc(len);
    if (!key)
        return -1;
    memcpy(key, &thread, 4);
    memcpy(key + 4, &n, 4);
    if (n)
        memcpy(key + 8, frames, sizeof *frames * n);
    uint32_t v = 0;
    int rc = 0;
    if (keymap_get(s->rows_by_key, key, len, &v)) {
        s->rows[v - 1].calls += calls;
        s->rows[v - 1].self += self;
    } else if (s->nrows == UINT32_MAX - 1) {
        rc = -1;
    } else {
        if (s->nrows == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 256;
            struct shadow_total *r = realloc(s->rows, sizeof *r * cap);
            if (!r) {
                rc = -1;
                goto out;
            }
            s->rows = r;
            s->cap = cap;
        }
        struct shadow_total *r = &s->rows[s->nrows];
        r->frames = malloc(sizeof *frames * (n ? n : 1));
        if (!r->frames || !keymap_put(s->rows_by_key, key, len, (uint32_t)s->nrows + 1)) {
            free(r->frames);
            rc = -1;
            goto out;
        }
        if (n)
            memcpy(r->frames, frames, sizeof *frames * n);
        r->thread = thread;
        r->n = n;
        r->calls = calls;
        r->self = self;
        s->nrows++;
    }
out:
    if (key != small)
        free(key);
    return rc;
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
    for (size_t i = 0; i < src->nrows; i++) {
        const struct shadow_total *r = &src->rows[i];
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
    return s->nrows;
}

const struct shadow_total *shadow_totals_at(const struct shadow_totals *s, size_t i)
{
    return &s->rows[i];
}

size_t shadow_totals_method_count(const struct shadow_totals *s)
{
    return s->nmethods;
}

const struct shadow_method_total *shadow_totals_method_at(const struct shadow_totals *s, size_t i)
{
    return &s->methods[i];
}
