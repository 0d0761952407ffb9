/*
 * heap_graph.c: load one heap dump into the compact graph of heap_graph.h: the three passes,
 * the sorted id array and its bucket index, the root edges, the compaction of the CSR.
 */
#include "heap_walk.h"
#include "rss_trace.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

unsigned heap_graph_type_size(const struct heap_graph *g, unsigned type)
{
    static const uint8_t sz[12] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
    if (type == 2)
        return g->m.idsize;
    return type < 12 ? sz[type] : 0;
}

const char *heap_graph_str(const struct heap_graph *g, uint64_t id, char *buf, size_t len)
{
    uint32_t n = 0;
    const char *s = mdump_string(&g->m, id, &n);
    if (!s) {
        snprintf(buf, len, "?");
        return buf;
    }
    size_t k = n < len - 1 ? n : len - 1;
    memcpy(buf, s, k);
    buf[k] = 0;
    return buf;
}

/* The segment of ids whose high 32 bits are `high`, or of object index k (by_index). */
static const struct hg_seg *find_seg(const struct heap_graph *g, uint64_t key, bool by_index)
{
    size_t lo = 0, hi = g->nsegs;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((by_index ? g->segs[mid].first : g->segs[mid].high) <= key)
            lo = mid;
        else
            hi = mid;
    }
    return g->nsegs ? &g->segs[lo] : NULL;
}

uint32_t heap_graph_node(const struct heap_graph *g, uint64_t id)
{
    const struct hg_seg *sg = find_seg(g, id >> 32, false);
    uint32_t want = (uint32_t)id;
    if (!sg || sg->high != id >> 32 || want < sg->low_min)
        return HG_NONE;
    uint64_t b = (uint64_t)(want - sg->low_min) >> sg->shift; /* shift: up to 33 */
    if (b >= sg->nbuckets)
        return HG_NONE;
    const uint32_t *bk = g->bucket + sg->bucket0 + b, *low = g->ids32;
    uint32_t lo = bk[0], hi = bk[1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (low[mid] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < bk[1] && low[lo] == want ? lo + g->first_obj : HG_NONE;
}

uint64_t heap_graph_id(const struct heap_graph *g, uint32_t node)
{
    if (node < g->first_obj || node >= g->n)
        return 0;
    uint32_t k = node - g->first_obj;
    return (uint64_t)find_seg(g, k, true)->high << 32 | g->ids32[k];
}

/* In-place quicksort of ids (the smaller side first keeps the stack at log n). */
static void sort_ids(uint64_t *a, size_t n)
{
    while (n > 24) {
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        size_t left = j + 1;
        if (left < n - left) {
            sort_ids(a, left);
            a += left;
            n -= left;
        } else {
            sort_ids(a + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t j = i;
        for (; j && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Sort ids that are nearly sorted (a dump lists most objects in address order, a few, such as
 * class objects, elsewhere): the elements below the running maximum go to a side array, which is
 * sorted alone and merged back from the end. 0, or -1 when more than n/16 are out of place (the
 * array is then still a permutation of the input, for sort_ids). */
static int sort_nearly(uint64_t *a, size_t n)
{
    size_t cap = n / 16 + 16, ne = 0, m = 0;
    uint64_t *ex = malloc(cap * sizeof *ex);
    if (!ex)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (m && a[i] < a[m - 1]) {
            if (ne == cap) { /* too many out of place: put them back after the run */
                memcpy(a + m, ex, ne * sizeof *ex);
                memmove(a + m + ne, a + i, (n - i) * sizeof *a);
                free(ex);
                return -1;
            }
            ex[ne++] = a[i];
        } else {
            a[m++] = a[i];
        }
    }
    sort_ids(ex, ne);
    for (size_t k = n; ne;) /* merge from the end: a[0..m) and ex[0..ne) into a[0..n) */
        a[--k] = m && a[m - 1] > ex[ne - 1] ? a[--m] : ex[--ne];
    free(ex);
    return 0;
}

/* The sorted ids become segments of one high 32-bit half (most dumps: one or two), each with a
 * bucket index on the low half (about one bucket per two ids), and the low halves alone (4
 * bytes an object): ids[] is freed. */
int heap_graph_index_ids(struct heap_graph *g)
{
    uint64_t n = g->nobjects, nsegs = 0, nb = 0;
    for (uint64_t i = 0; i < n; i++)
        nsegs += !i || g->ids[i] >> 32 != g->ids[i - 1] >> 32;
    g->segs = calloc(nsegs ? nsegs : 1, sizeof *g->segs);
    g->ids32 = malloc((n ? n : 1) * sizeof *g->ids32);
    if (!g->segs || !g->ids32)
        return -1;
    for (uint64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && g->ids[j] >> 32 == g->ids[i] >> 32;)
            j++;
        struct hg_seg *sg = &g->segs[g->nsegs++];
        uint64_t cnt = j - i;
        uint32_t low_min = (uint32_t)g->ids[i], span = (uint32_t)g->ids[j - 1] - low_min;
        unsigned shift = 0;
        while ((span >> shift) > cnt / 2 + 1)
            shift++;
        *sg = (struct hg_seg){g->ids[i] >> 32, (uint32_t)i, low_min,
                              shift,           nb,          ((uint64_t)span >> shift) + 1};
        nb += sg->nbuckets + 1;
    }
    g->nbuckets = nb;
    g->bucket = malloc((nb ? nb : 1) * sizeof *g->bucket);
    if (!g->bucket)
        return -1;
    for (uint32_t s = 0; s < g->nsegs; s++) {
        const struct hg_seg *sg = &g->segs[s];
        uint64_t k = sg->first, end = s + 1 < g->nsegs ? g->segs[s + 1].first : n;
        for (uint64_t b = 0; b <= sg->nbuckets; b++) {
            while (k < end && (((uint32_t)g->ids[k] - sg->low_min) >> sg->shift) < b)
                k++;
            g->bucket[sg->bucket0 + b] = (uint32_t)k;
        }
    }
    for (uint64_t i = 0; i < n; i++)
        g->ids32[i] = (uint32_t)g->ids[i];
    free(g->ids);
    g->ids = NULL;
    return 0;
}

static void progress(const struct heap_graph *g, const char *phase, uint64_t done, uint64_t all)
{
    if (g->progress)
        fprintf(stderr, "\r%-28s %3u%%", phase, all ? (unsigned)(done * 100 / all) : 100);
}

struct job {
    struct walk w;
    size_t from, to; /* ranges */
    int rc;
    bool main;
    const char *phase;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    struct heap_graph *g = j->w.g;
    uint64_t done = 0;
    for (size_t i = j->from; i < j->to && !j->rc; i++) {
        j->rc = heap_walk_range(&j->w, &g->m.ranges[i]);
        done += g->m.ranges[i].len;
        if (j->main && (i & 63) == 0)
            progress(g, j->phase, done, g->m.dump_bytes / 2 + 1);
    }
    return NULL;
}

/* Run a pass over all ranges, in two threads when it may (pass 2 and 3, several ranges). */
static int run_pass(struct heap_graph *g, int pass, bool two, const char *phase, char *err,
                    size_t errlen, struct walk *out)
{
    struct job j[2];
    memset(j, 0, sizeof j);
    size_t nr = g->m.nranges, half = nr;
    if (two && nr > 1) { /* split the ranges at half the bytes */
        uint64_t acc = 0;
        for (half = 0; half < nr && acc < g->m.dump_bytes / 2; half++)
            acc += g->m.ranges[half].len;
    }
    for (int k = 0; k < 2; k++) {
        j[k].w.g = g;
        j[k].w.pass = pass;
        j[k].phase = phase;
    }
    j[0].from = half;
    j[0].to = nr;
    j[1].from = 0;
    j[1].to = half;
    j[1].main = true;
    pthread_t th;
    bool started = half < nr && half > 0 && pthread_create(&th, NULL, run_job, &j[0]) == 0;
    if (!started)
        j[1].to = nr;
    run_job(&j[1]);
    if (started)
        pthread_join(th, NULL);
    progress(g, phase, 1, 1);
    for (int k = 1; k >= 0; k--)
        if (j[k].rc) {
            snprintf(err, errlen, "%s", j[k].w.err);
            return j[k].rc;
        }
    if (out) {
        out->dangling = j[0].w.dangling + j[1].w.dangling;
        out->weak = j[0].w.weak + j[1].w.weak;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool frame_root(const struct hg_root *r)
{
    return r->kind == 0x02 || r->kind == 0x03;
}

/* Thread nodes: one per thread serial named by a frame, JNI local or thread object root. */
static int make_threads(struct heap_graph *g)
{
    uint32_t *s = malloc((g->nroots + 1) * sizeof *s), n = 0;
    if (!s)
        return -1;
    for (size_t i = 0; i < g->nroots; i++)
        if (g->roots[i].thread && (frame_root(&g->roots[i]) || g->roots[i].kind == 0x08))
            s[n++] = g->roots[i].thread;
    qsort(s, n, sizeof *s, cmp_u32);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!k || s[k - 1] != s[i])
            s[k++] = s[i];
    g->threads = calloc(k + 1, sizeof *g->threads);
    if (!g->threads) {
        free(s);
        return -1;
    }
    for (uint32_t i = 0; i < k; i++)
        g->threads[i] = (struct hg_thread){s[i], HG_NONE};
    g->nthreads = k;
    free(s);
    return 0;
}

static uint32_t thread_node(const struct heap_graph *g, uint32_t serial)
{
    uint32_t lo = 0, hi = g->nthreads;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->threads[mid].serial < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->nthreads && g->threads[lo].serial == serial ? 1 + lo : HG_NONE;
}

/* The parent of a root's edge: its thread's node for frame roots, else the virtual root. */
static uint32_t root_parent(const struct heap_graph *g, const struct hg_root *r)
{
    uint32_t t = frame_root(r) ? thread_node(g, r->thread) : HG_NONE;
    return t == HG_NONE ? 0 : t;
}

/* Edges of the virtual nodes: counts (fill = false) or the edges themselves. */
static void root_edges(struct heap_graph *g, bool fill)
{
    uint64_t *cur = NULL;
    if (!fill) {
        g->off[1] = g->nthreads;
    } else {
        for (uint32_t t = 0; t < g->nthreads; t++)
            g->adj[g->off[0] + t] = 1 + t;
        cur = calloc(g->first_obj, sizeof *cur); /* small: one per virtual node */
    }
    for (size_t i = 0; i < g->nroots; i++) {
        const struct hg_root *r = &g->roots[i];
        uint32_t to = heap_graph_node(g, r->id), from = root_parent(g, r);
        if (r->kind == 0x08 && r->thread && to != HG_NONE) {
            uint32_t t = thread_node(g, r->thread);
            if (t != HG_NONE)
                g->threads[t - 1].object = to;
        }
        if (to == HG_NONE)
            continue;
        if (!fill)
            g->off[from + 1]++;
        else if (cur)
            g->adj[g->off[from] + (from == 0 ? g->nthreads : 0) + cur[from]++] = to;
    }
    free(cur);
}

/* Drop the references to ids the dump does not hold (written as HG_NONE by pass 3). */
static void compact(struct heap_graph *g)
{
    uint32_t w = 0, start = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t end = g->off[i + 1];
        g->off[i] = w;
        for (uint32_t k = start; k < end; k++)
            if (g->adj[k] != HG_NONE)
                g->adj[w++] = g->adj[k];
        start = end;
    }
    g->off[g->n] = w;
    g->nrefs = w;
    g->object_refs = w - (g->off[g->first_obj] - g->off[0]);
}

/* An OpenJ9 portable heap dump starts with the UTF string "portable heap dump". */
static bool is_phd(const char *path)
{
    unsigned char head[20];
    FILE *in = fopen(path, "rb");
    bool yes = in && fread(head, 1, sizeof head, in) == sizeof head && head[0] == 0 &&
               head[1] == 18 && !memcmp(head + 2, "portable heap dump", 18);
    if (in)
        fclose(in);
    return yes;
}

int heap_graph_load(struct heap_graph *g, const char *path, size_t which, unsigned oop_size,
                    bool show_progress, char *err, size_t errlen, bool *bad_input)
{
    memset(g, 0, sizeof *g);
    g->oop_size = oop_size;
    g->progress = show_progress;
    if (is_phd(path)) {
        if (which == 0)
            return heap_graph_load_phd(g, path, err, errlen, bad_input);
        snprintf(err, errlen, "a PHD file holds one heap dump: --dump=%zu", which + 1);
        *bad_input = false;
        return -1;
    }
    if (mdump_open(&g->m, path, which, err, errlen, bad_input) < 0)
        return -1;
    *bad_input = true;
    struct walk w1 = {.g = g, .pass = PASS_IDS};
    for (size_t i = 0; i < g->m.nranges; i++) {
        int rc = heap_walk_range(&w1, &g->m.ranges[i]);
        if (rc) {
            *bad_input = rc == -1;
            snprintf(err, errlen, "%s", w1.err);
            free(w1.ids);
            return -1;
        }
        if ((i & 63) == 0)
            progress(g, "reading objects", i, g->m.nranges);
    }
    progress(g, "reading objects", 1, 1);
    rss_trace("object ids");
    g->ids = w1.nids ? realloc(w1.ids, w1.nids * sizeof *w1.ids) : w1.ids;
    if (!g->ids)
        g->ids = w1.ids;
    g->nobjects = w1.nids;
    if (g->nobjects >= UINT32_MAX - 1024) {
        snprintf(err, errlen, "%" PRIu64 " objects: more than 32-bit indexes allow", g->nobjects);
        return -1;
    }
    *bad_input = false;
    int crc = heap_classes_resolve(g, err, errlen);
    if (crc) {
        *bad_input = crc == -1;
        return -1;
    }
    bool sorted = true;
    for (uint64_t i = 1; i < g->nobjects && sorted; i++)
        sorted = g->ids[i - 1] < g->ids[i];
    if (!sorted && sort_nearly(g->ids, g->nobjects) < 0)
        sort_ids(g->ids, g->nobjects);
    for (uint64_t i = 1; i < g->nobjects; i++)
        g->duplicates += g->ids[i - 1] == g->ids[i];
    if (make_threads(g) < 0 || heap_graph_index_ids(g) < 0)
        goto oom;
    g->first_obj = 1 + g->nthreads;
    g->n = g->first_obj + (uint32_t)g->nobjects;
    g->cls = malloc((size_t)g->n * sizeof *g->cls);
    g->shallow8 = calloc(g->n, sizeof *g->shallow8);
    g->off = calloc((size_t)g->n + 1, sizeof *g->off);
    if (!g->cls || !g->shallow8 || !g->off)
        goto oom;
    memset(g->cls, 0xff, (size_t)g->n * sizeof *g->cls);
    struct walk tot = {0};
    /* with duplicate ids one thread finds which record repeats, without a race */
    int rc = run_pass(g, PASS_COUNT, g->duplicates == 0, "sizing objects", err, errlen, &tot);
    if (rc) {
        *bad_input = rc == -1;
        return -1;
    }
    g->weak_skipped = tot.weak;
    rss_trace("sizes and counts");
    root_edges(g, false);
    /* 32-bit offsets (4 bytes an object less than 64-bit ones): the counts are summed in 64
     * bits and a dump with 2^32 - 1 references or more is refused */
    uint64_t total = 0;
    for (uint32_t i = 0; i <= g->n; i++) {
        total += g->off[i];
        if (total >= UINT32_MAX) {
            snprintf(err, errlen, "more than %" PRIu32 " references: too many for this analyzer",
                     UINT32_MAX - 1);
            return -1;
        }
        g->off[i] = (uint32_t)total;
    }
    g->adj = malloc(((size_t)g->off[g->n] + 1) * sizeof *g->adj);
    if (!g->adj)
        goto oom;
    root_edges(g, true);
    rc = run_pass(g, PASS_FILL, true, "reading references", err, errlen, &tot);
    if (rc) {
        *bad_input = rc == -1;
        return -1;
    }
    g->dangling = tot.dangling;
    compact(g);
    rss_trace("references");
    if (g->progress)
        fputc('\n', stderr);
    return 0;
oom:
    snprintf(err, errlen, "out of memory building the graph of %" PRIu64 " objects", g->nobjects);
    return -1;
}

void heap_graph_coarsen_index(struct heap_graph *g)
{
    /* bucket b of the coarser index starts where bucket 16b of the finer one did (or, past the
     * segment's last finer bucket, at the segment's end), so it is computed in place */
    uint64_t nb = 0;
    for (uint32_t s = 0; s < g->nsegs; s++) {
        struct hg_seg *sg = &g->segs[s];
        uint64_t fine = sg->nbuckets, coarse = ((fine - 1) >> 4) + 1;
        for (uint64_t b = 0; b <= coarse; b++)
            g->bucket[nb + b] = g->bucket[sg->bucket0 + (16 * b < fine ? 16 * b : fine)];
        sg->bucket0 = nb;
        sg->nbuckets = coarse;
        sg->shift += 4;
        nb += coarse + 1;
    }
    g->nbuckets = nb;
    uint32_t *p = nb ? realloc(g->bucket, nb * sizeof *g->bucket) : NULL;
    if (p)
        g->bucket = p;
}

void heap_graph_drop_edges(struct heap_graph *g)
{
    free(g->off);
    free(g->adj);
    g->off = NULL;
    g->adj = NULL;
}

void heap_graph_free(struct heap_graph *g)
{
    heap_classes_free(g);
    free(g->ids);
    free(g->ids32);
    free(g->segs);
    free(g->cls);
    free(g->shallow8);
    free(g->off);
    free(g->adj);
    free(g->threads);
    free(g->roots);
    free(g->bucket);
    mdump_close(&g->m);
    memset(g, 0, sizeof *g);
}
