/* heap=sites: allocation sites (class, stack trace) with allocated and live objects and bytes,
 * written as SITES (ascii) or ALLOC SITES and HEAP SUMMARY (binary). doc/heap-sites.md. */
#ifndef HPROF_HEAP_SITES_H
#define HPROF_HEAP_SITES_H

#include <stdint.h>

#include "profile.h"

extern const struct hprof_profile heap_sites_profile;

/* For heap dumps (agent/profiles/heap_dump/heap_site_map.c): where each object in the heap was
 * allocated, as heap=sites' live counts see it. fn is called for every object counted at a
 * site (tagged with a site, or an untagged object of a class with a default site), with the
 * callback's tag pointer (IterateThroughHeap's, in one of heap=sites' environments), its class
 * tag there, its size and the site id. The walks are those of the live counts: one per tag
 * environment, allocations held at the gate, so every object is counted once. *collections gets
 * heap_sites_collections() before the walks. The counts these walks make (and the allocation
 * counts of the same moment) serve the SITES and HEAP SUMMARY sections of the same request
 * (req), which then walks nothing: the heap dump's section comes first in a dump. Returns false
 * (and walks nothing) unless heap=sites runs in exact mode. */
struct dump_request;
typedef void (*heap_sites_object_fn)(void *ctx, jlong *tag_ptr, jlong class_tag, jlong size,
                                     uint32_t site);
bool heap_sites_walk_objects(const struct dump_request *req, heap_sites_object_fn fn, void *ctx,
                             uint64_t *collections);

/* A site's trace serial (HPROF_TRACE_SERIAL_NONE for an id that names no site). No lock, no
 * JVMTI call: safe in heap-walk callbacks. The emitter writes the trace (emit_trace). */
uint32_t heap_sites_trace_of_site(uint32_t site);

/* Garbage collections finished so far (tag_envs_collections): objects move only in them. */
uint64_t heap_sites_collections(void);

#endif
