/* The allocation site of each object of a heap dump (heap=all, or heap=dump with heap=sites in
 * exact mode): before the dump's walk, heap=sites' own walks (heap_sites_walk_objects) give
 * every object they count at a site; this map keeps object address -> site, and the dump's
 * walk, which names objects by address (WALK_IDS_ADDRESSES), looks each object up there.
 *
 * Addresses name the same objects in both walks only if no collection ran between them: the
 * first look-up compares the collection count with the one before the map was made and, if a
 * collection ran, every object gets the empty trace (heap_site_map_stale). Collections are
 * counted in GarbageCollectionFinish, which HotSpot posts inside the collection's pause, so the
 * check made inside the dump's walk (at a safepoint) sees every collection before it.
 *
 * Each site met gets a small index (up to 65,535 of them let the table take its direct
 * layout); the table (heap_site_table.h) maps an address to the index, an array here gives the
 * index's trace. An object above 2^43 (8 TiB) is not kept and gets the empty trace. The walks
 * only gather the pairs; the table is made once, after them; the dump's walk names each
 * referree ahead of its visit (heap_site_map_prefetch) so that its look-up hits the cache
 * (doc/heap-dump.md, "Map layout"). */
#ifndef HPROF_HEAP_SITE_MAP_H
#define HPROF_HEAP_SITE_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "heap_site_table.h"
#include "writer.h"

struct heap_site_map {
    struct heap_site_table table; /* address -> index of the object's site */
    uint32_t *index_of;           /* by site id: its index; 0 if no object of the map is there */
    uint32_t sites_cap;
    uint32_t *traces; /* by index: the site's trace (index 0: none) */
    uint32_t ntraces, traces_cap;
    uint64_t collections; /* before the walks */
    bool active;          /* made; false: heap=sites not in exact mode, or out of memory */
    bool checked, stale;  /* the collection check was made; it found a collection */
    bool broken;          /* an IterateThroughHeap callback's wrapper did not hold its address */
};

/* Makes the map (heap=sites' walks, with allocations held while they run; their counts serve
 * req's SITES section too). Returns m->active. */
struct dump_request;
bool heap_site_map_build(struct heap_site_map *m, const struct dump_request *req);

/* heap=sites' walks as heap_site_map_build makes them, keeping nothing (to measure the map's
 * own cost against them: HPROF_DUMP_SITES=walks). */
void heap_site_map_walk_only(const struct dump_request *req);

/* Writes the STACK TRACE (and frames) of every site the map names (before the dump). */
void heap_site_map_emit_traces(const struct heap_site_map *m, struct hprof_writer *w);

/* The allocation trace of the object at this address (HPROF_TRACE_SERIAL_NONE: not known). */
uint32_t heap_site_map_trace(struct heap_site_map *m, uint64_t address);

/* Starts loading the table's line for this address, which heap_site_map_trace will read. */
void heap_site_map_prefetch(const struct heap_site_map *m, uint64_t address);

/* The collection check again, for another walk. */
void heap_site_map_recheck(struct heap_site_map *m);

void heap_site_map_free(struct heap_site_map *m);

#endif
