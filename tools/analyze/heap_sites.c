/*
 * heap_sites.c: allocation sites of a heap dump's objects, their live and retained bytes. See
 * heap_sites.h and doc/heap-analysis.md.
 */
#include "heap_sites.h"

#include "heap_find.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_pair(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int cmp_trace(const void *x, const void *y)
{
    uint32_t a = ((const struct hs_trace *)x)->serial, b = ((const struct hs_trace *)y)->serial;
    return a < b ? -1 : a > b;
}

static int push(void **arr, size_t *n, size_t *cap, size_t size, const void *item)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        void *p = realloc(*arr, nc * size);
        if (!p)
            return -1;
        *arr = p;
        *cap = nc;
    }
    memcpy((char *)*arr + *n * size, item, size);
    (*n)++;
    return 0;
}

/* The top-level STACK TRACE, STACK FRAME and LOAD CLASS records of the whole file (traces
 * are written before the dump that names them). A record that does not fit is skipped. */
static int read_traces(struct heap_sites *s, const struct mapped_dump *m)
{
    unsigned ids = m->idsize;
    const uint8_t *b = m->base;
    size_t hl = strnlen((const char *)b, m->size);
    uint64_t p = hl + 1 + 4 + 8;
    size_t tcap = 0, fcap = 0, ccap = 0;
    while (p + 9 <= m->size) {
        unsigned tag = b[p];
        uint64_t len = mdump_u4(b + p + 5), body = p + 9;
        if (len > m->size - body)
            break;
        p = body + len;
        if (tag == 0x05 && len >= 12) {
            struct hs_trace t = {mdump_u4(b + body), mdump_u4(b + body + 8), 0, body + 12};
            if ((uint64_t)t.nframes * ids > len - 12)
                continue;
            if (push((void **)&s->traces, &s->ntraces, &tcap, sizeof t, &t) < 0)
                return -1;
        } else if (tag == 0x04 && len >= 4 * (uint64_t)ids + 8) {
            uint64_t f[2] = {mdump_id(m, b + body), body};
            if (push((void **)&s->frames, &s->nframes, &fcap, sizeof f, f) < 0)
                return -1;
        } else if (tag == 0x02 && len >= 2 * (uint64_t)ids + 8) {
            uint64_t c[2] = {mdump_u4(b + body), mdump_id(m, b + body + ids + 8)};
            if (push((void **)&s->lclass, &s->nlclass, &ccap, sizeof c, c) < 0)
                return -1;
        }
    }
    if (s->ntraces)
        qsort(s->traces, s->ntraces, sizeof *s->traces, cmp_trace);
    if (s->nframes)
        qsort(s->frames, s->nframes, 2 * sizeof *s->frames, cmp_pair);
    if (s->nlclass)
        qsort(s->lclass, s->nlclass, 2 * sizeof *s->lclass, cmp_pair);
    return 0;
}

/* Traces listing the same frames are one site: each trace's canon is the first such trace
 * (sorted by a hash of the frame ids, equal ones compared). */
static const uint64_t *hash_v;
static int cmp_hash(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    if (hash_v[i] != hash_v[j])
        return hash_v[i] < hash_v[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int canonical(struct heap_sites *s, const struct mapped_dump *m)
{
    size_t n = s->ntraces, fb;
    uint64_t *h = malloc((n + 1) * sizeof *h);
    uint32_t *ix = malloc((n + 1) * sizeof *ix);
    if (!h || !ix) {
        free(h);
        free(ix);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct hs_trace *t = &s->traces[i];
        const uint8_t *p = m->base + t->frames_off;
        fb = (size_t)t->nframes * m->idsize;
        uint64_t x = 0xcbf29ce484222325ull ^ t->nframes;
        for (size_t k = 0; k < fb; k++)
            x = (x ^ p[k]) * 0x100000001B3ull;
        h[i] = x;
        ix[i] = (uint32_t)i;
        s->traces[i].canon = (uint32_t)i;
    }
    hash_v = h;
    if (n)
        qsort(ix, n, sizeof *ix, cmp_hash);
    for (size_t r = 0; r < n;) {
        size_t e = r + 1;
        while (e < n && h[ix[e]] == h[ix[r]])
            e++;
        for (size_t i = r + 1; i < e; i++) {
            struct hs_trace *t = &s->traces[ix[i]];
            fb = (size_t)t->nframes * m->idsize;
            for (size_t j = r; j < i; j++) {
                const struct hs_trace *u = &s->traces[ix[j]];
                if (u->canon == ix[j] && u->nframes == t->nframes &&
                    !memcmp(m->base + u->frames_off, m->base + t->frames_off, fb)) {
                    t->canon = ix[j];
                    break;
                }
            }
        }
        r = e;
    }
    free(h);
    free(ix);
    return 0;
}

static uint32_t trace_index(const struct heap_sites *s, uint32_t serial)
{
    size_t lo = 0, hi = s->ntraces;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->traces[mid].serial < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ntraces && s->traces[lo].serial == serial ? (uint32_t)lo : UINT32_MAX;
}

struct walk_ctx {
    struct heap_sites *s;
    const struct heap_analysis *a;
    uint32_t last_serial, last_trace; /* objects come in runs of one site */
    bool cached;
    uint32_t last_cls, last_site;
    uint32_t *table; /* open addressing: site indexes by (trace, class) */
    uint32_t tcap;
    size_t scap;
    int oom;
};

static uint32_t site_of(struct walk_ctx *c, uint32_t trace, uint32_t cls)
{
    struct heap_sites *s = c->s;
    if (2 * ((size_t)s->ns + 1) > c->tcap) {
        uint32_t nc = c->tcap ? 2 * c->tcap : 1024;
        uint32_t *t = calloc(nc, sizeof *t);
        if (!t)
            return c->oom = 1, 0;
        for (uint32_t k = 1; k < s->ns; k++) {
            uint32_t h = (s->s[k].trace * 0x9E3779B1u ^ s->s[k].cls * 0x85EBCA77u) & (nc - 1);
            while (t[h])
                h = (h + 1) & (nc - 1);
            t[h] = k;
        }
        free(c->table);
        c->table = t;
        c->tcap = nc;
    }
    uint32_t h = (trace * 0x9E3779B1u ^ cls * 0x85EBCA77u) & (c->tcap - 1);
    for (; c->table[h]; h = (h + 1) & (c->tcap - 1))
        if (s->s[c->table[h]].trace == trace && s->s[c->table[h]].cls == cls)
            return c->table[h];
    struct hs_site n = {trace, cls, 0, 0, 0};
    size_t ns = s->ns;
    if (push((void **)&s->s, &ns, &c->scap, sizeof n, &n) < 0)
        return c->oom = 1, 0;
    c->table[h] = s->ns;
    return s->ns++;
}

static void visit(void *ctx, uint64_t rec)
{
    struct walk_ctx *c = ctx;
    struct heap_sites *s = c->s;
    const struct heap_graph *g = c->a->g;
    unsigned ids = g->m.idsize;
    const uint8_t *p = g->m.base + rec;
    if (c->oom || p[0] == 0x20 || rec + 1 + ids + 4 > g->m.size)
        return; /* class objects have no allocation site of their own */
    uint32_t serial = mdump_u4(p + 1 + ids);
    if (serial != c->last_serial || !c->cached) {
        c->cached = true;
        uint32_t t = trace_index(s, serial);
        c->last_serial = serial;
        c->last_trace = t == UINT32_MAX || !s->traces[t].nframes ? 0 : s->traces[t].canon + 1;
    }
    if (!c->last_trace) {
        s->without++;
        return;
    }
    s->with++;
    uint32_t node = heap_graph_node(g, mdump_id(&g->m, p + 1));
    if (node == HG_NONE || g->cls[node] == HG_NONE)
        return;
    if (!s->site && !(s->site = calloc(g->n, sizeof *s->site))) {
        c->oom = 1;
        return;
    }
    uint32_t cls = g->cls[node];
    if (c->last_site == 0 || cls != c->last_cls || s->s[c->last_site].trace != c->last_trace - 1) {
        c->last_site = site_of(c, c->last_trace - 1, cls);
        c->last_cls = cls;
    }
    s->site[node] = c->last_site;
}

int heap_sites_build(struct heap_sites *s, const struct heap_analysis *a)
{
    memset(s, 0, sizeof *s);
    s->ns = 1;
    const struct heap_graph *g = a->g;
    if (read_traces(s, &g->m) < 0)
        return -1;
    if (canonical(s, &g->m) < 0)
        return -1;
    bool any = false;
    for (size_t i = 0; i < s->ntraces && !any; i++)
        any = s->traces[i].nframes > 0;
    if (!any) { /* HotSpot's dumps: no object can name a stack, no walk needed */
        s->without = g->nobjects - g->ndumped;
        return 0;
    }
    struct walk_ctx c = {.s = s, .a = a};
    struct hs_site none = {0};
    size_t n0 = 0;
    if (push((void **)&s->s, &n0, &c.scap, sizeof none, &none) < 0)
        return -1;
    int rc = heap_find_each(g, visit, &c);
    free(c.table);
    if (rc < 0 || c.oom)
        return -1;
    if (!s->site)
        return 0;
    uint64_t *ret = calloc(s->ns, sizeof *ret);
    if (!ret || domtree_group_retained(&a->tree, a->retained, s->site, s->ns, ret) < 0) {
        free(ret);
        return -1;
    }
    for (uint32_t v = g->first_obj; v < g->n; v++) {
        uint32_t k = s->site[v];
        if (k && a->idom[v] != HG_NONE) {
            s->s[k].count++;
            s->s[k].shallow += heap_analysis_shallow(a, v);
        }
    }
    for (uint32_t k = 1; k < s->ns; k++)
        s->s[k].retained = ret[k] << a->ret_shift;
    free(ret);
    return 0;
}

void heap_sites_free(struct heap_sites *s)
{
    free(s->traces);
    free(s->frames);
    free(s->lclass);
    free(s->site);
    free(s->s);
    memset(s, 0, sizeof *s);
}

static const struct heap_sites *cmp_s;
static int cmp_site(const void *x, const void *y)
{
    const struct hs_site *a = &cmp_s->s[*(const uint32_t *)x], *b = &cmp_s->s[*(const uint32_t *)y];
    if (a->retained != b->retained)
        return a->retained < b->retained ? 1 : -1;
    if (a->shallow != b->shallow)
        return a->shallow < b->shallow ? 1 : -1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

uint32_t heap_sites_sorted(const struct heap_sites *s, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t k = 1; k < s->ns; k++)
        if (s->s[k].count)
            out[n++] = k;
    cmp_s = s;
    if (n)
        qsort(out, n, sizeof *out, cmp_site);
    return n;
}

static const uint64_t *find_pair(const uint64_t *arr, size_t n, uint64_t key)
{
    return n ? bsearch(&key, arr, n, 2 * sizeof *arr, cmp_pair) : NULL;
}

/* "pkg.Class.method(File.java:12)" of one frame id into buf */
static void frame_text(const struct heap_sites *s, const struct heap_graph *g, uint64_t fid,
                       char *buf, size_t len)
{
    const struct mapped_dump *m = &g->m;
    unsigned ids = m->idsize;
    const uint64_t *f = find_pair(s->frames, s->nframes, fid);
    if (!f) {
        snprintf(buf, len, "<frame 0x%llx>", (unsigned long long)fid);
        return;
    }
    const uint8_t *p = m->base + f[1];
    char meth[256], src[256], cls[512] = "?";
    heap_graph_str(g, mdump_id(m, p + ids), meth, sizeof meth);
    uint64_t src_id = mdump_id(m, p + 3 * ids);
    if (src_id)
        heap_graph_str(g, src_id, src, sizeof src);
    const uint64_t *c = find_pair(s->lclass, s->nlclass, mdump_u4(p + 4 * ids));
    if (c) {
        heap_graph_str(g, c[1], cls, sizeof cls);
        for (char *q = cls; *q; q++)
            *q = *q == '/' ? '.' : *q;
    }
    int32_t line = (int32_t)mdump_u4(p + 4 * ids + 4);
    char where[300];
    if (line == -3)
        snprintf(where, sizeof where, "Native Method");
    else if (!src_id)
        snprintf(where, sizeof where, "Unknown Source");
    else if (line > 0)
        snprintf(where, sizeof where, "%s:%d", src, line);
    else
        snprintf(where, sizeof where, "%s", src);
    snprintf(buf, len, "%s.%s(%s)", cls, meth, where);
}

const char *heap_sites_stack(const struct heap_sites *s, const struct heap_graph *g, uint32_t trace,
                             unsigned maxf, char *buf, size_t len)
{
    buf[0] = 0;
    if (trace >= s->ntraces || !len)
        return buf;
    const struct hs_trace *t = &s->traces[trace];
    size_t k = 0;
    for (uint32_t i = 0; i < t->nframes && k + 1 < len; i++) {
        char fr[900];
        if (i == maxf) {
            snprintf(buf + k, len - k, " <- ...");
            break;
        }
        frame_text(s, g, mdump_id(&g->m, g->m.base + t->frames_off + (size_t)i * g->m.idsize), fr,
                   sizeof fr);
        int w = snprintf(buf + k, len - k, "%s%s", i ? " <- " : "", fr);
        k += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const char *heap_sites_name(const struct heap_sites *s, const struct heap_graph *g, uint32_t k,
                            unsigned maxf, char *buf, size_t len)
{
    if (!k || k >= s->ns) {
        snprintf(buf, len, "?");
        return buf;
    }
    int w = snprintf(buf, len, "%s at ", g->classes[s->s[k].cls].name);
    if (w > 0 && (size_t)w < len)
        heap_sites_stack(s, g, s->s[k].trace, maxf, buf + w, len - (size_t)w);
    return buf;
}

uint32_t heap_sites_below(const struct heap_sites *s, const struct heap_analysis *a, uint32_t v,
                          uint64_t *bytes, uint64_t *count)
{
    *bytes = *count = 0;
    if (!s->site || v >= a->g->n)
        return 0;
    const uint32_t *kids;
    uint32_t nk = domtree_children(&a->tree, v, &kids);
    uint64_t *sum = calloc(s->ns, sizeof *sum), *num = calloc(s->ns, sizeof *num);
    uint32_t best = 0;
    if (sum && num) {
        for (uint32_t i = 0; i < nk; i++) {
            uint32_t k = s->site[kids[i]];
            sum[k] += heap_analysis_retained(a, kids[i]);
            num[k]++;
            if (k && (!best || sum[k] > sum[best]))
                best = k;
        }
    }
    if (best) {
        *bytes = sum[best];
        *count = num[best];
    } else if (s->site[v]) {
        best = s->site[v];
        *bytes = heap_analysis_retained(a, v);
        *count = 1;
    }
    free(sum);
    free(num);
    return best;
}
