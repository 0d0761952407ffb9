#include "trace_cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct trace_cache {
    unsigned max_frames;
    unsigned slots, shift; /* slot index = hash >> shift */
    size_t stride;         /* bytes per entry */
    unsigned char *entries;
};

struct trace_cache *trace_cache_new(unsigned max_frames, unsigned slots)
{
    if (max_frames > TRACE_CACHE_MAX_FRAMES)
        max_frames = TRACE_CACHE_MAX_FRAMES;
    if (slots < 2 || slots > TRACE_CACHE_MAX_SLOTS || (slots & (slots - 1)) != 0)
        return NULL;
    struct trace_cache *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->max_frames = max_frames;
    c->slots = slots;
    c->shift = 64;
    for (unsigned n = slots; n > 1; n >>= 1)
        c->shift--;
    c->stride = sizeof(struct trace_cache_entry) + max_frames * sizeof(struct raw_frame);
    c->entries = calloc(slots, c->stride);
    if (!c->entries) {
        free(c);
        return NULL;
    }
    return c;
}

unsigned trace_cache_slots(const struct trace_cache *c)
{
    return c->slots;
}

void trace_cache_free(struct trace_cache *c)
{
    if (c) {
        free(c->entries);
        free(c);
    }
}

void trace_cache_each_ref(struct trace_cache *c, void (*fn)(void *ref, void *ctx), void *ctx)
{
    for (unsigned i = 0; i < c->slots; i++) {
        struct trace_cache_entry *e = (struct trace_cache_entry *)(c->entries + i * c->stride);
        if (e->class_ref)
            fn(e->class_ref, ctx);
    }
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

uint64_t trace_cache_hash(const struct raw_frame *frames, unsigned n, uint32_t thread_serial)
{
    uint64_t h = mix(0x243f6a8885a308d3ull, ((uint64_t)thread_serial << 32) | n);
    for (unsigned i = 0; i < n; i++) {
        h = mix(h, frames[i].method);
        h = mix(h, (uint64_t)frames[i].location);
    }
    return h ? h : 1;
}

static struct trace_cache_entry *slot(struct trace_cache *c, uint64_t hash)
{
    /* The low bits went through the multiply; the top ones mix best. */
    size_t i = (size_t)(hash >> c->shift);
    return (struct trace_cache_entry *)(c->entries + i * c->stride);
}

struct trace_cache_entry *trace_cache_find(struct trace_cache *c, uint64_t hash,
                                           const struct raw_frame *frames, unsigned n,
                                           uint32_t thread_serial)
{
    if (n > c->max_frames)
        return NULL;
    struct trace_cache_entry *e = slot(c, hash);
    if (e->hash != hash || e->nframes != n || e->thread_serial != thread_serial)
        return NULL;
    if (n && memcmp(e->frames, frames, n * sizeof *frames) != 0)
        return NULL;
    return e;
}

struct trace_cache_entry *trace_cache_store(struct trace_cache *c, uint64_t hash,
                                            const struct raw_frame *frames, unsigned n,
                                            uint32_t thread_serial, uint32_t trace_serial)
{
    if (n > c->max_frames)
        return NULL;
    struct trace_cache_entry *e = slot(c, hash);
    e->hash = hash;
    e->nframes = n;
    e->thread_serial = thread_serial;
    e->trace_serial = trace_serial;
    e->class_serial = 0;
    e->site = 0;
    if (n)
        memcpy(e->frames, frames, n * sizeof *frames);
    return e;
}
