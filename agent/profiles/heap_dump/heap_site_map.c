#include "heap_site_map.h"

#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "heap_sites.h"
#include "heap_walk.h"
#include "log.h"

/* Each site of the map gets a small index, in the order the walks first meet it: the table
 * keeps the index (16 bits are enough for up to 65,535 sites, and let the table take the
 * direct layout), the look-up reads the site's trace here by index (a small array, in the
 * cache) rather than in heap=sites' table. */
static uint32_t index_of_site(struct heap_site_map *m, uint32_t site)
{
    if (site >= m->sites_cap) {
        uint32_t cap = m->sites_cap ? m->sites_cap : 1024;
        while (cap <= site)
            cap *= 2;
        uint32_t *idx = realloc(m->index_of, cap * sizeof *idx);
        if (!idx)
            return 0;
        memset(idx + m->sites_cap, 0, (cap - m->sites_cap) * sizeof *idx);
        m->index_of = idx;
        m->sites_cap = cap;
    }
    if (m->index_of[site] != 0)
        return m->index_of[site];
    if (m->ntraces == m->traces_cap) {
        uint32_t cap = m->traces_cap ? m->traces_cap * 2 : 1024;
        uint32_t *traces =
            cap <= HEAP_SITE_TABLE_VALUE_LIMIT ? realloc(m->traces, cap * sizeof *traces) : NULL;
        if (!traces)
            return 0;
        m->traces = traces;
        m->traces_cap = cap;
    }
    if (m->ntraces == 0)
        m->traces[m->ntraces++] = HPROF_TRACE_SERIAL_NONE; /* index 0: no site */
    m->traces[m->ntraces] = heap_sites_trace_of_site(site);
    return m->index_of[site] = m->ntraces++;
}

/* heap=sites' walk callback (heap_sites_object_fn): on the VM thread, inside the walk. */
static void add_object(void *ctx, jlong *tag_ptr, jlong class_tag, jlong size, uint32_t site)
{
    struct heap_site_map *m = ctx;
    uint64_t address;
    if (!m->active)
        return;
    if (!heap_walk_address_of(tag_ptr, class_tag, size, &address)) {
        m->broken = true;
        return;
    }
    if (address >= HEAP_SITE_TABLE_ADDRESS_LIMIT || address == 0)
        return; /* not kept: the object gets the empty trace */
    uint32_t index = index_of_site(m, site);
    if (index == 0 || !heap_site_table_add(&m->table, address, index))
        m->active = false;
}

bool heap_site_map_build(struct heap_site_map *m, const struct dump_request *req)
{
    memset(m, 0, sizeof *m);
    m->active = true;
    if (!heap_sites_walk_objects(req, add_object, m, &m->collections) || m->broken) {
        if (m->broken)
            log_warning("heap dump: heap=sites' heap walk did not give object addresses; "
                        "objects carry no allocation sites");
        heap_site_map_free(m);
        return false;
    }
    if (!m->active || !heap_site_table_make(&m->table, HEAP_SITE_NONE)) {
        log_error("out of memory for the allocation sites of a heap dump; objects carry none");
        heap_site_map_free(m);
        return false;
    }
    return true;
}

static void ignore_object(void *ctx, jlong *tag_ptr, jlong class_tag, jlong size, uint32_t site)
{
    (void)ctx;
    (void)tag_ptr;
    (void)class_tag;
    (void)size;
    (void)site;
}

void heap_site_map_walk_only(const struct dump_request *req)
{
    uint64_t collections;
    heap_sites_walk_objects(req, ignore_object, NULL, &collections);
}

void heap_site_map_emit_traces(const struct heap_site_map *m, struct hprof_writer *w)
{
    for (uint32_t i = 1; m->active && i < m->ntraces; i++)
        emit_trace(w, m->traces[i]);
}

uint32_t heap_site_map_trace(struct heap_site_map *m, uint64_t address)
{
    if (!m->checked) {
        m->checked = true;
        m->stale = heap_sites_collections() != m->collections;
    }
    if (!m->active || m->stale)
        return HPROF_TRACE_SERIAL_NONE;
    uint32_t index = heap_site_table_get(&m->table, address);
    return index ? m->traces[index] : HPROF_TRACE_SERIAL_NONE;
}

void heap_site_map_prefetch(const struct heap_site_map *m, uint64_t address)
{
    heap_site_table_prefetch(&m->table, address);
}

void heap_site_map_recheck(struct heap_site_map *m)
{
    m->checked = m->stale = false;
}

void heap_site_map_free(struct heap_site_map *m)
{
    heap_site_table_free(&m->table);
    free(m->index_of);
    free(m->traces);
    memset(m, 0, sizeof *m);
}
