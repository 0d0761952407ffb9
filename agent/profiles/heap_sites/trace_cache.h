/* A per-thread cache in front of the shared trace and site tables: the raw frames of a stack
 * (method, location pairs as GetStackTrace returns them) -> trace serial, and for the last
 * class allocated under that stack, the site id. An allocation whose stack was seen recently
 * costs one hash of its frames and one compare, with no lock and no shared cache line.
 * Owned by one thread; pure C (frames are plain integers here, the class reference an opaque
 * pointer the owner creates and deletes). */
#ifndef HPROF_TRACE_CACHE_H
#define HPROF_TRACE_CACHE_H

#include <stdint.h>

/* Same layout as jvmtiFrameInfo on LP64 (jmethodID, jlocation). */
struct raw_frame {
    uint64_t method;
    int64_t location;
};

struct trace_cache_entry {
    uint64_t hash; /* 0 = empty */
    uint32_t nframes;
    uint32_t thread_serial;
    uint32_t trace_serial;
    uint32_t class_serial; /* last class allocated under this stack, 0 = none */
    uint32_t site;         /* its site id, 0 = none */
    uint32_t unused;
    void *class_ref; /* owner's reference to that class (a JNI weak reference); kept by store */
    struct raw_frame frames[]; /* nframes of them, top first */
};

/* Stacks deeper than this are not cached (they go to the shared table each time). */
#define TRACE_CACHE_MAX_FRAMES 16u
#define TRACE_CACHE_MAX_SLOTS 4096u

struct trace_cache;

/* A cache of slots entries (a power of two, at most TRACE_CACHE_MAX_SLOTS) for stacks of up
 * to max_frames frames (capped at TRACE_CACHE_MAX_FRAMES). */
struct trace_cache *trace_cache_new(unsigned max_frames, unsigned slots);
unsigned trace_cache_slots(const struct trace_cache *c);
void trace_cache_free(struct trace_cache *c);

/* Hash of a stack as the cache keys it. Never 0. */
uint64_t trace_cache_hash(const struct raw_frame *frames, unsigned n, uint32_t thread_serial);

/* The entry for exactly these frames on this thread serial, or NULL. */
struct trace_cache_entry *trace_cache_find(struct trace_cache *c, uint64_t hash,
                                           const struct raw_frame *frames, unsigned n,
                                           uint32_t thread_serial);

/* Replaces the slot of hash with this stack -> trace_serial (class serial and site cleared,
 * class_ref left for the owner to reuse or delete). Returns the entry, or NULL when the stack
 * is too deep to cache. */
struct trace_cache_entry *trace_cache_store(struct trace_cache *c, uint64_t hash,
                                            const struct raw_frame *frames, unsigned n,
                                            uint32_t thread_serial, uint32_t trace_serial);

/* Calls fn(ref, ctx) for every non-NULL class_ref (before freeing the cache). */
void trace_cache_each_ref(struct trace_cache *c, void (*fn)(void *ref, void *ctx), void *ctx);

#endif
