/*
 * diff_table.c: two profiles of one kind turned into one table of keyed entries. Stacks are
 * keyed by their frames' text, never by trace serials (each run numbers its traces anew), and
 * without line numbers unless asked (a changed build moves lines).
 */
#include "diff.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void *diff_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "hprof-diff: out of memory\n");
        exit(2);
    }
    return p;
}

void *diff_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "hprof-diff: out of memory\n");
        exit(2);
    }
    return p;
}

char *diff_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(diff_xmalloc(n), s, n);
}

static const char *const kind_names[DK_NKINDS] = {"cpu",     "times", "methods", "sites",
                                                  "monitor", "heap",  "wall"};
static const enum hprof_section_kind kind_sections[DK_NKINDS] = {
    HPROF_CPU_SAMPLES,  HPROF_CPU_TIME,     HPROF_CPU_METHODS, HPROF_SITES,
    HPROF_MONITOR_TIME, HPROF_HEAP_CLASSES, HPROF_WALL_SAMPLES};
static const char *const group_names[DG_NGROUPS] = {"stack", "self",    "total", "method",
                                                    "site",  "monitor", "class"};

const char *diff_kind_name(enum diff_kind k)
{
    return kind_names[k];
}
enum hprof_section_kind diff_kind_section(enum diff_kind k)
{
    return kind_sections[k];
}
const char *diff_group_name(enum diff_group g)
{
    return group_names[g];
}

bool diff_kind_parse(const char *s, enum diff_kind *k)
{
    for (int i = 0; i < DK_NKINDS; i++) {
        if (strcmp(s, kind_names[i]) == 0) {
            *k = (enum diff_kind)i;
            return true;
        }
    }
    return false;
}

/* ---- the entry map: (group, key) -> entry, open addressing ---------------------------------- */

struct builder {
    struct diff_table *t;
    size_t cap;
    size_t *slots; /* entry index + 1; 0 = empty */
    size_t nslots;
    const struct diff_keys *keys;
    char *buf; /* key being built */
    size_t blen, bcap;
};

static uint64_t hash_key(enum diff_group g, const char *s)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)g;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void rehash(struct builder *b)
{
    size_t n = b->nslots ? b->nslots * 2 : 1024;
    free(b->slots);
    b->slots = diff_xmalloc(n * sizeof *b->slots);
    memset(b->slots, 0, n * sizeof *b->slots);
    b->nslots = n;
    for (size_t i = 0; i < b->t->n; i++) {
        size_t s = hash_key(b->t->e[i].group, b->t->e[i].key) & (n - 1);
        while (b->slots[s])
            s = (s + 1) & (n - 1);
        b->slots[s] = i + 1;
    }
}

/* The entry of (g, key), created empty if new. */
static struct diff_entry *entry(struct builder *b, enum diff_group g, const char *key)
{
    if ((b->t->n + 1) * 4 > b->nslots * 3)
        rehash(b);
    size_t s = hash_key(g, key) & (b->nslots - 1);
    while (b->slots[s]) {
        struct diff_entry *e = &b->t->e[b->slots[s] - 1];
        if (e->group == g && strcmp(e->key, key) == 0)
            return e;
        s = (s + 1) & (b->nslots - 1);
    }
    if (b->t->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 256;
        b->t->e = diff_xrealloc(b->t->e, b->cap * sizeof *b->t->e);
    }
    struct diff_entry *e = &b->t->e[b->t->n];
    memset(e, 0, sizeof *e);
    e->group = g;
    e->key = diff_xstrdup(key);
    b->slots[s] = ++b->t->n;
    return e;
}

static void add(struct diff_entry *e, bool is_new, const uint64_t *v, unsigned nm)
{
    uint64_t *dst = is_new ? e->new_ : e->base;
    for (unsigned i = 0; i < nm; i++)
        dst[i] += v[i];
    if (is_new)
        e->in_new = true;
    else
        e->in_base = true;
}

static void put(struct builder *b, const char *s)
{
    size_t n = strlen(s);
    if (b->blen + n + 1 > b->bcap) {
        b->bcap = (b->blen + n + 1) * 2;
        b->buf = diff_xrealloc(b->buf, b->bcap);
    }
    memcpy(b->buf + b->blen, s, n + 1);
    b->blen += n;
}

/* A class name without the address a hidden class carries ("Main$$Lambda$14.0x0000000801001200"
 * -> "Main$$Lambda$14"): it changes from run to run. */
static void put_class(struct builder *b, const char *name)
{
    char *copy = diff_xstrdup(name), *w = copy;
    for (const char *r = name; *r;) {
        if ((*r == '.' || *r == '/' || *r == '+') && r[1] == '0' && r[2] == 'x' &&
            isxdigit((unsigned char)r[3])) {
            r += 3;
            while (isxdigit((unsigned char)*r))
                r++;
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
    put(b, copy);
    free(copy);
}

/* "Class.method" or "Class.method:line" */
static void frame_text(struct builder *b, const struct hprof_pframe *f, bool lines)
{
    put_class(b, f->class_name);
    put(b, ".");
    put(b, f->method);
    if (lines && f->line > 0) {
        char num[16];
        snprintf(num, sizeof num, ":%d", (int)f->line);
        put(b, num);
    }
}

/* How many frames of trace t the keys keep (the top ones). */
static unsigned kept(const struct builder *b, const struct hprof_ptrace *t)
{
    return b->keys->frames && b->keys->frames < t->nframes ? b->keys->frames : t->nframes;
}

/* b->buf = the stack of trace t, root first, ';' between frames. */
static void stack_key(struct builder *b, const struct hprof_profile *p,
                      const struct hprof_ptrace *t)
{
    unsigned n = kept(b, t);
    for (unsigned i = n; i-- > 0;) {
        frame_text(b, &p->frames[t->frames[i]], b->keys->lines);
        if (i)
            put(b, ";");
    }
    if (n == 0)
        put(b, "<no stack>");
}

static void set_frames(struct builder *b, struct diff_entry *e, const struct hprof_profile *p,
                       const struct hprof_ptrace *t, const char *leaf)
{
    if (e->frames)
        return;
    unsigned n = kept(b, t);
    e->nframes = n + (leaf ? 1 : 0);
    e->frames = diff_xmalloc((e->nframes ? e->nframes : 1) * sizeof *e->frames);
    for (unsigned i = 0; i < n; i++) {
        size_t save = b->blen;
        frame_text(b, &p->frames[t->frames[n - 1 - i]], b->keys->lines);
        e->frames[i] = diff_xstrdup(b->buf + save);
        b->blen = save;
        b->buf[save] = 0;
    }
    if (leaf)
        e->frames[n] = diff_xstrdup(leaf);
}

static void from_profile(struct builder *b, const struct hprof_profile *p, bool is_new)
{
    struct diff_table *t = b->t;
    const struct hprof_section *s = &p->sections[t->section];
    unsigned nm = hprof_section_nmeasures(t->section);
    uint64_t *total = is_new ? t->new_total : t->base_total;
    for (size_t r = 0; r < s->nrows; r++) {
        const struct hprof_row *row = &s->rows[r];
        for (unsigned i = 0; i < nm; i++)
            total[i] += row->v[i];
        const struct hprof_ptrace *tr =
            row->trace == HPROF_NO_TRACE ? NULL : &p->traces[row->trace];
        static const struct hprof_ptrace empty = {0, 0, 0, NULL};
        if (!tr)
            tr = &empty;
        b->blen = 0;
        put(b, "");
        switch (t->kind) {
        case DK_CPU:
        case DK_WALL:
        case DK_TIMES: {
            stack_key(b, p, tr);
            struct diff_entry *e = entry(b, DG_STACK, b->buf);
            add(e, is_new, row->v, nm);
            set_frames(b, e, p, tr, NULL);
            unsigned n = kept(b, tr);
            for (unsigned i = 0; i < n; i++) {
                /* a method once per stack, however often it recurses */
                b->blen = 0;
                put(b, "");
                frame_text(b, &p->frames[tr->frames[i]], false);
                bool seen = false;
                for (unsigned j = 0; j < i && !seen; j++) {
                    const struct hprof_pframe *x = &p->frames[tr->frames[i]],
                                              *y = &p->frames[tr->frames[j]];
                    seen = strcmp(x->class_name, y->class_name) == 0 &&
                           strcmp(x->method, y->method) == 0;
                }
                if (i == 0)
                    add(entry(b, DG_SELF, b->buf), is_new, row->v, nm);
                if (!seen) {
                    /* a total's time includes its callees' rows, its calls only its own */
                    uint64_t v[HPROF_MAX_MEASURES] = {row->v[0], i == 0 ? row->v[1] : 0};
                    add(entry(b, DG_TOTAL, b->buf), is_new, t->kind == DK_TIMES ? v : row->v, nm);
                }
            }
            break;
        }
        case DK_METHODS:
            put(b, row->name ? row->name : "?");
            add(entry(b, DG_METHOD, b->buf), is_new, row->v, nm);
            break;
        case DK_SITES:
        case DK_MONITOR: {
            put_class(b, row->name ? row->name : "?");
            char *leaf = diff_xstrdup(b->buf); /* the class, drawn as the leaf frame */
            put(b, " @ ");
            stack_key(b, p, tr);
            struct diff_entry *e = entry(b, t->kind == DK_SITES ? DG_SITE : DG_MONITOR, b->buf);
            add(e, is_new, row->v, nm);
            b->blen = 0;
            b->buf[0] = 0;
            set_frames(b, e, p, tr, leaf);
            free(leaf);
            break;
        }
        case DK_HEAP:
            put_class(b, row->name ? row->name : "?");
            add(entry(b, DG_CLASS, b->buf), is_new, row->v, nm);
            break;
        case DK_NKINDS:
            break;
        }
    }
    /* cpu=old: self and total times are shares of the run's time (the header's total), not of
     * the sum of the rows' inclusive times, which counts a callee once per caller */
    if (t->kind == DK_METHODS && s->total)
        total[0] = total[1] = s->total;
}

static struct diff_table *new_table(enum diff_kind k)
{
    struct diff_table *t = diff_xmalloc(sizeof *t);
    memset(t, 0, sizeof *t);
    t->kind = k;
    t->section = kind_sections[k];
    return t;
}

struct diff_table *diff_table_build(enum diff_kind k, const struct hprof_profile *base,
                                    const struct hprof_profile *nw, const struct diff_keys *keys)
{
    struct diff_table *t = new_table(k);
    struct builder b = {.t = t, .keys = keys};
    rehash(&b);
    from_profile(&b, base, false);
    from_profile(&b, nw, true);
    const struct hprof_section *bs = &base->sections[t->section], *ns = &nw->sections[t->section];
    t->base_index = bs->index;
    t->base_count = bs->count;
    t->new_index = ns->index;
    t->new_count = ns->count;
    free(b.slots);
    free(b.buf);
    return t;
}

struct diff_table *diff_table_classes(const struct diff_class_count *base, size_t nbase,
                                      const struct diff_class_count *nw, size_t nnew)
{
    struct diff_table *t = new_table(DK_HEAP);
    struct diff_keys keys = {false, 0};
    struct builder b = {.t = t, .keys = &keys};
    rehash(&b);
    for (int side = 0; side < 2; side++) {
        const struct diff_class_count *c = side ? nw : base;
        size_t n = side ? nnew : nbase;
        uint64_t *total = side ? t->new_total : t->base_total;
        for (size_t i = 0; i < n; i++) {
            uint64_t v[2] = {c[i].count, c[i].bytes};
            add(entry(&b, DG_CLASS, c[i].name), side == 1, v, 2);
            total[0] += v[0];
            total[1] += v[1];
        }
    }
    t->base_count = t->new_count = 1;
    free(b.slots);
    return t;
}

void diff_table_free(struct diff_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].key);
        for (unsigned j = 0; j < t->e[i].nframes; j++)
            free(t->e[i].frames[j]);
        free(t->e[i].frames);
    }
    free(t->e);
    free(t);
}
