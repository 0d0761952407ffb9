/* cpu=times / cpu=old bookkeeping of one Java thread, fed by the tracker's entry and exit calls:
 * a shadow stack of the instrumented methods the thread is in, and one counter node per
 * distinct top of that stack (its top `depth` frames: what becomes a TRACE). Pure C, no JVMTI:
 * the agent passes frames and times in, so every rule here is unit-tested.
 *
 * Only the owning thread calls shadow_stack_enter/shadow_stack_exit (no locks, no allocation except
 * when a table grows: a new trace, a deeper stack). Other threads (a dump) may read the nodes and
 * the method records at the same time: they are never moved once published, their counters are
 * relaxed atomics, and the published count is a release store.
 *
 * Time is in the caller's ticks; a frame's self time is its elapsed time minus the elapsed
 * time of the instrumented calls it made, charged when it exits. */
#ifndef HPROF_SHADOW_STACK_H
#define HPROF_SHADOW_STACK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A method as the rewritten code names it: class number (cnum, >= 1) and method number (mnum,
 * below 65536: a class file holds at most 65535 methods). */
typedef uint64_t shadow_frame;
#define SHADOW_FRAME(cnum, mnum) (((uint64_t)(uint32_t)(cnum) << 32) | (uint32_t)(mnum))
#define SHADOW_CNUM(f) ((uint32_t)((f) >> 32))
#define SHADOW_MNUM(f) ((uint32_t)(f))
/* The frame new call paths are counted under past the memory budget (memory=): below it every
 * call is counted at the overflow node itself, so calls and times stay whole. No class has
 * this number. */
#define SHADOW_FRAME_OVERFLOW SHADOW_FRAME(UINT32_MAX, 0xFFFFu)
/* In a folded row, the first frame of an unloaded class below a live top frame: what prints of
 * such a row (the empty trace, labelled by the top frame; or at a smaller depth the live frames
 * above it) does not depend on which class it was, so all such rows of one live prefix are one.
 * No class has this number, and it never names a method. */
#define SHADOW_FRAME_UNLOADED SHADOW_FRAME(UINT32_MAX, 0xFFFEu)

/* Most frames a node key holds (the depth= option's maximum). */
#define SHADOW_MAX_DEPTH 1024
/* Most entries of one shadow stack; deeper calls are not tracked (counted in overflow). */
#define SHADOW_MAX_HEIGHT (1u << 20)

struct shadow_child;

/* One distinct top of stack: frame, then the frames below it through parent (node 0 is the
 * empty stack), len frames in all. It owns the counters of the calls made from it: one per
 * callee (and depth), in a small hash table of its own, so the calls one activation makes
 * touch a few neighbouring cache lines. */
/* The counters of the calls of one callee (frame, depth) from one node. key 0 = empty slot
 * (class number 0 is never used). */
struct shadow_child {
    _Atomic(uint64_t) key;    /* frame | depth << 16 (method numbers are below 65536) */
    struct shadow_node *node; /* the callee's top of stack */
    _Atomic(uint64_t) calls;
    _Atomic(uint64_t) self;
};

struct shadow_node {
    struct shadow_child *children; /* replaced only under the thread's grow_lock */
    uint32_t mask, count;          /* children: mask + 1 slots (0 = none yet) */
    shadow_frame frame;
    struct shadow_node *parent; /* the frames below (NULL when len <= 1) */
    uint32_t len;
    uint32_t method; /* index of frame's method record (per-method mode), else 0 */
};

/* Per-method mode (cpu=old): the time from the outermost entry of a method to its exit, so
 * recursion is not counted twice. */
struct shadow_method {
    shadow_frame frame;
    uint32_t active; /* activations on the stack now; owner only */
    _Atomic(uint64_t) total;
};

struct shadow_stats {
    uint64_t unmatched_exits; /* exits of frames not on the stack (entered before tracking) */
    uint64_t unwound;         /* frames popped by an exit below them (exception in super()) */
    uint64_t overflow;        /* entries beyond SHADOW_MAX_HEIGHT or out of memory */
};

struct shadow_thread;

/* Called by shadow_stack_enter on the owner thread, between two calls, when a new call path is
 * about to be made and the thread holds at least its fold threshold of nodes: it may call
 * shadow_fold_run (below). The threshold is then doubled unless the fold set it. */
typedef void (*shadow_fold_hook)(struct shadow_thread *t, void *ctx);

/* A thread's state; per_method adds the method records cpu=old needs. grow_lock (may be NULL)
 * is taken when the counter table is replaced by a larger one: readers (the totals) must hold
 * it. NULL if out of memory. */
struct shadow_thread *shadow_stack_thread_new(bool per_method, pthread_mutex_t *grow_lock);
void shadow_stack_thread_free(struct shadow_thread *t);
/* The bytes t holds (charged to mem_account). Read by another thread: a close figure. */
size_t shadow_stack_thread_bytes(const struct shadow_thread *t);

/* depth: frames a node key keeps (1..SHADOW_MAX_DEPTH; the caller maps depth=0 to 1). When it
 * changes between calls, new nodes use the new depth. */
void shadow_stack_enter(struct shadow_thread *t, shadow_frame f, uint64_t now, unsigned depth);
/* An exit of f: pops f, and first every frame above it (they were left by an exception that
 * no handler of theirs saw). An exit of a frame not on the stack is ignored. */
void shadow_stack_exit(struct shadow_thread *t, shadow_frame f, uint64_t now);

/* Installs the fold hook, first called once the thread holds min_nodes nodes. */
void shadow_stack_set_fold_hook(struct shadow_thread *t, shadow_fold_hook hook, void *ctx,
                                uint32_t min_nodes);

uint32_t shadow_stack_height(const struct shadow_thread *t);
struct shadow_stats shadow_stack_thread_stats(const struct shadow_thread *t);

/* Readers, from any thread. Node 0 is the empty stack (no frame, no counts). */
uint32_t shadow_stack_node_count(const struct shadow_thread *t);
const struct shadow_node *shadow_stack_node_at(const struct shadow_thread *t, uint32_t i);
/* The node's frames, top first, at most max of them; returns how many were written. */
size_t shadow_stack_frames_of(const struct shadow_node *node, shadow_frame *out, size_t max);
size_t shadow_stack_node_frames(const struct shadow_thread *t, uint32_t i, shadow_frame *out,
                                size_t max);
uint32_t shadow_stack_method_count(const struct shadow_thread *t);
const struct shadow_method *shadow_stack_method_at(const struct shadow_thread *t, uint32_t i);

/* ---- totals over threads, for a dump ------------------------------------------------ */

/* One row: the top `n` frames (n <= the depth asked) seen on a thread (0 unless per thread). */
struct shadow_total {
    uint32_t thread;
    uint32_t n;
    shadow_frame *frames;
    uint64_t calls, self;
};

struct shadow_method_total {
    shadow_frame frame;
    uint64_t calls, self, total;
};

struct shadow_totals;

struct shadow_totals *shadow_totals_new(void);
void shadow_totals_free(struct shadow_totals *s);
/* About the bytes s holds (its indexes and rows), for the memory report. */
size_t shadow_totals_bytes(const struct shadow_totals *s);

/* Adds what thread t counted (a running thread's counts as they are now: hold t's grow_lock),
 * its traces cut to depth frames (0 = the empty trace) and keyed by thread (pass 0 to merge
 * threads). Returns 0, or -1 when out of memory (then part of it may be added). */
int shadow_totals_add_thread(struct shadow_totals *s, const struct shadow_thread *t,
                             uint32_t thread, unsigned depth);
/* Adds every row of src (cut to depth frames) into dst. */
int shadow_totals_add_totals(struct shadow_totals *dst, const struct shadow_totals *src,
                             unsigned depth);

/* Adds one row's counts (frames top first; the method of frames[0], which is the row's
 * frame) as shadow_totals_add_thread adds a node's. */
int shadow_totals_add_count(struct shadow_totals *s, uint32_t thread, const shadow_frame *frames,
                            uint32_t n, uint64_t calls, uint64_t self);

size_t shadow_totals_count(const struct shadow_totals *s);
const struct shadow_total *shadow_totals_at(const struct shadow_totals *s, size_t i);
size_t shadow_totals_method_count(const struct shadow_totals *s);
const struct shadow_method_total *shadow_totals_method_at(const struct shadow_totals *s, size_t i);

/* ---- folding the paths of unloaded classes (shadow_fold.c) ----------------------------- */

/* The fold's first threshold in the agent: a thread with fewer nodes never folds. */
#define SHADOW_FOLD_MIN_NODES 4096

/* Whether class cnum is gone for good: unloaded, none of its methods can run again. */
typedef bool (*shadow_gone_fn)(uint32_t cnum, void *ctx);

struct shadow_fold_result {
    uint32_t nodes_before, nodes_after; /* nodes of t */
    uint64_t rows;                      /* counters moved to the totals */
};

/* Owner thread only, between two calls (the fold hook). Every call path of t that names a
 * method of a gone class can never be entered again: its counters (calls and self time of each
 * callee seen from it, and of it from its callers) are added to `to` under `thread` at full
 * depth, as shadow_totals_add_thread adds them at a thread's end, and its node and callee table
 * are freed; a node is kept without its table only as a frame of a longer path that stays. The
 * nodes left move to fresh tables of their size. Holds t's grow_lock while it adds to `to` and
 * switches tables, so a reader that holds it sees every count exactly once. Sets the next
 * threshold to twice the nodes left (at least min_nodes). Returns 0, or -1 when out of memory
 * (nothing moved, or part of the counters lost when `to` could not grow). */
int shadow_fold_run(struct shadow_thread *t, struct shadow_totals *to, uint32_t thread,
                    shadow_gone_fn gone, void *ctx, uint32_t min_nodes,
                    struct shadow_fold_result *res);

#endif
