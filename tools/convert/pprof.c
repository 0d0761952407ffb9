/*
 * pprof.c: profile.proto (github.com/google/pprof, proto/profile.proto), gzipped, written by a
 * small encoder of our own: the format needs only varints, length-delimited fields and packed
 * repeated varints, and a generated protobuf-c binding would add a build dependency and ~2,000
 * generated lines for these ~40 (doc/tools.md says why).
 */
#include "convert.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- a growing byte buffer with protobuf primitives ----------------------------------- */

struct pb {
    uint8_t *b;
    size_t n, cap;
    bool oom;
};

static void pb_bytes(struct pb *p, const void *d, size_t n)
{
    if (p->oom)
        return;
    if (p->n + n > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->n + n)
            cap *= 2;
        uint8_t *b = realloc(p->b, cap);
        if (!b) {
            p->oom = true;
            return;
        }
        p->b = b;
        p->cap = cap;
    }
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pb_bytes(p, tmp, n);
}

enum { WT_VARINT = 0, WT_LEN = 2 };

static void pb_key(struct pb *p, unsigned field, unsigned wt)
{
    pb_varint(p, (uint64_t)field << 3 | wt);
}

/* a varint field, left out when 0 (proto3 default) */
static void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
    if (v) {
        pb_key(p, field, WT_VARINT);
        pb_varint(p, v);
    }
}

static void pb_len(struct pb *p, unsigned field, const void *d, size_t n)
{
    pb_key(p, field, WT_LEN);
    pb_varint(p, n);
    pb_bytes(p, d, n);
}

/* ---- strings and functions, each interned once ---------------------------------------- */

struct intern {
    char **keys;
    size_t n, cap;
    uint32_t *hash; /* index + 1, 0 = empty */
    size_t hcap;
    bool oom;
};

static uint64_t hash_mem(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* index of the key (n bytes, may hold NULs), added if new */
static uint64_t intern_key(struct intern *t, const char *s, size_t n)
{
    if (t->oom)
        return 0;
    if ((t->n + 1) * 2 >= t->hcap) {
        size_t hcap = t->hcap ? t->hcap * 2 : 1024;
        uint32_t *h = calloc(hcap, sizeof *h);
        if (!h) {
            t->oom = true;
            return 0;
        }
        for (size_t i = 0; i < t->n; i++) {
            size_t len;
            memcpy(&len, t->keys[i], sizeof len);
            size_t j = hash_mem(t->keys[i] + sizeof len, len) & (hcap - 1);
            while (h[j])
                j = (j + 1) & (hcap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(t->hash);
        t->hash = h;
        t->hcap = hcap;
    }
    size_t j = hash_mem(s, n) & (t->hcap - 1);
    for (; t->hash[j]; j = (j + 1) & (t->hcap - 1)) {
        const char *k = t->keys[t->hash[j] - 1];
        size_t len;
        memcpy(&len, k, sizeof len);
        if (len == n && !memcmp(k + sizeof len, s, n))
            return t->hash[j] - 1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **k = realloc(t->keys, cap * sizeof *k);
        if (!k) {
            t->oom = true;
            return 0;
        }
        t->keys = k;
        t->cap = cap;
    }
    char *k = malloc(sizeof n + n + 1); /* the length, the bytes, a NUL */
    if (!k) {
        t->oom = true;
        return 0;
    }
    memcpy(k, &n, sizeof n);
    memcpy(k + sizeof n, s, n);
    k[sizeof n + n] = 0;
    t->keys[t->n] = k;
    t->hash[j] = (uint32_t)++t->n;
    return t->n - 1;
}

static uint64_t str_ix(struct intern *strs, const char *s)
{
    return intern_key(strs, s, strlen(s));
}

static void intern_free(struct intern *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->hash);
}

void conv_pprof_type(enum hprof_section_kind k, unsigned m, const char **type, const char **unit)
{
    const char *name = hprof_section_measure(k, m);
    *type = name;
    *unit = "count";
    if (!strcmp(name, "alloc_bytes"))
        *type = "alloc_space", *unit = "bytes";
    else if (!strcmp(name, "alloc_objects"))
        *type = "alloc_objects";
    else if (!strcmp(name, "live_bytes"))
        *type = "inuse_space", *unit = "bytes";
    else if (!strcmp(name, "live_objects"))
        *type = "inuse_objects";
    else if (!strcmp(name, "time_ms"))
        *type = k == HPROF_MONITOR_TIME ? "delay" : "cpu", *unit = "milliseconds";
    else if (!strcmp(name, "self_ms"))
        *type = "self_cpu", *unit = "milliseconds";
    else if (!strcmp(name, "total_ms"))
        *type = "total_cpu", *unit = "milliseconds";
    else if (!strcmp(name, "entries"))
        *type = "contentions";
}

/* ---- the profile ---------------------------------------------------------------------- */

struct penc {
    const struct conv *c;
    struct pb out, msg, sub;
    struct intern strs, funcs, leaves;
    uint64_t *frame_func; /* per profile frame, its function id */
};

/* the id of the function (name, system name, file), added to out if new */
static uint64_t function(struct penc *e, const char *name, const char *sys, const char *file)
{
    size_t a = strlen(name), b = strlen(sys), c = strlen(file);
    char *key = malloc(a + b + c + 3);
    if (!key) {
        e->funcs.oom = true;
        return 0;
    }
    memcpy(key, name, a + 1);
    memcpy(key + a + 1, sys, b + 1);
    memcpy(key + a + b + 2, file, c + 1);
    size_t before = e->funcs.n;
    uint64_t id = intern_key(&e->funcs, key, a + b + c + 3) + 1;
    free(key);
    if (e->funcs.n > before) {
        e->msg.n = 0;
        pb_uint(&e->msg, 1, id);
        pb_uint(&e->msg, 2, str_ix(&e->strs, name));
        pb_uint(&e->msg, 3, str_ix(&e->strs, sys));
        pb_uint(&e->msg, 4, str_ix(&e->strs, file));
        pb_len(&e->out, 5, e->msg.b, e->msg.n);
    }
    return id;
}

static void location(struct penc *e, uint64_t id, uint64_t func, int64_t line)
{
    e->sub.n = 0;
    pb_uint(&e->sub, 1, func);
    if (line > 0)
        pb_uint(&e->sub, 2, (uint64_t)line);
    e->msg.n = 0;
    pb_uint(&e->msg, 1, id);
    pb_len(&e->msg, 4, e->sub.b, e->sub.n);
    pb_len(&e->out, 4, e->msg.b, e->msg.n);
}

static int gzip_to(const uint8_t *d, size_t n, FILE *out)
{
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        errno = ENOMEM;
        return -1;
    }
    uint8_t buf[65536];
    z.next_in = (Bytef *)d;
    z.avail_in = (uInt)n; /* the encoded profile stays far below 4 GiB */
    int rc;
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        rc = deflate(&z, Z_FINISH);
        fwrite(buf, 1, sizeof buf - z.avail_out, out);
    } while (rc == Z_OK);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        errno = EIO;
        return -1;
    }
    return ferror(out) ? -1 : 0;
}

/* The state of a WALL SAMPLES row: its trace's top frame "<wall>.<state>"; NULL otherwise. */
static const char *wall_state_of(const struct hprof_profile *p, const struct hprof_section *s,
                                 const struct hprof_ptrace *t)
{
    if (s->kind != HPROF_WALL_SAMPLES || !t || t->nframes == 0)
        return NULL;
    const struct hprof_pframe *f = &p->frames[t->frames[0]];
    return strcmp(f->class_name, "<wall>") == 0 ? f->method : NULL;
}

int conv_pprof(const struct conv *c, const char *comment, FILE *out)
{
    const struct hprof_profile *p = c->p;
    const struct hprof_section *s = c->s;
    struct penc e = {.c = c};
    int rc = -1;
    str_ix(&e.strs, ""); /* string 0 is always "" */
    e.frame_func = calloc(p->nframes ? p->nframes : 1, sizeof *e.frame_func);
    if (!e.frame_func)
        goto done;

    unsigned nm = hprof_section_nmeasures(s->kind);
    for (unsigned m = 0; m < nm; m++) {
        const char *type, *unit;
        conv_pprof_type(s->kind, m, &type, &unit);
        e.msg.n = 0;
        pb_uint(&e.msg, 1, str_ix(&e.strs, type));
        pb_uint(&e.msg, 2, str_ix(&e.strs, unit));
        pb_len(&e.out, 1, e.msg.b, e.msg.n);
    }

    /* locations 1..nframes: the profile's frames; then the leaves (classes, methods, "[no
     * stack]") numbered from nframes + 1 in the order first met */
    char *sys = NULL;
    size_t syscap = 0;
    for (size_t i = 0; i < p->nframes; i++) {
        const struct hprof_pframe *f = &p->frames[i];
        size_t need = strlen(f->class_name) + strlen(f->method) + strlen(f->signature) + 2;
        if (need > syscap) {
            char *q = realloc(sys, need);
            if (!q) {
                free(sys);
                goto done;
            }
            sys = q;
            syscap = need;
        }
        snprintf(sys, need, "%s.%s%s", f->class_name, f->method, f->signature);
        char *name = sys + strlen(sys) - strlen(f->signature);
        char save = *name;
        *name = 0; /* name = "class.method" */
        char *plain = strdup(sys);
        *name = save;
        if (!plain) {
            free(sys);
            goto done;
        }
        e.frame_func[i] = function(&e, plain, sys, f->source ? f->source : "");
        free(plain);
        location(&e, i + 1, e.frame_func[i], f->line);
    }
    free(sys);

    size_t max = conv_max_depth(c);
    uint64_t *locs = malloc(max * sizeof *locs);
    if (!locs)
        goto done;
    for (size_t i = 0; i < s->nrows; i++) {
        const struct hprof_row *r = &s->rows[i];
        size_t n = 0;
        const char *leaf = NULL;
        const struct hprof_ptrace *t = NULL;
        if (s->kind == HPROF_CPU_METHODS)
            leaf = r->name ? r->name : "[no stack]";
        else {
            t = r->trace != HPROF_NO_TRACE && r->trace < p->ntraces ? &p->traces[r->trace] : NULL;
            if ((s->kind == HPROF_SITES || s->kind == HPROF_MONITOR_TIME) && r->name)
                leaf = r->name;
        }
        if (leaf) {
            size_t before = e.leaves.n;
            uint64_t id = p->nframes + 1 + intern_key(&e.leaves, leaf, strlen(leaf));
            if (e.leaves.n > before) {
                const char *lsys = s->kind == HPROF_CPU_METHODS && r->signature ? r->signature : "";
                char *full = malloc(strlen(leaf) + strlen(lsys) + 1);
                if (!full) {
                    free(locs);
                    goto done;
                }
                strcat(strcpy(full, leaf), lsys);
                location(&e, id, function(&e, leaf, full, ""), 0);
                free(full);
            }
            locs[n++] = id;
        }
        if (t)
            for (uint32_t k = 0; k < t->nframes; k++) /* leaf first, as pprof wants */
                locs[n++] = t->frames[k] + 1;
        if (!n) {
            size_t before = e.leaves.n;
            uint64_t id = p->nframes + 1 + intern_key(&e.leaves, "\1no stack", 9);
            if (e.leaves.n > before)
                location(&e, id, function(&e, "[no stack]", "[no stack]", ""), 0);
            locs[n++] = id;
        }
        e.sub.n = 0; /* packed location ids */
        for (size_t k = 0; k < n; k++)
            pb_varint(&e.sub, locs[k]);
        e.msg.n = 0;
        pb_len(&e.msg, 1, e.sub.b, e.sub.n);
        e.sub.n = 0;
        for (unsigned m = 0; m < nm; m++)
            pb_varint(&e.sub, r->v[m] > INT64_MAX ? INT64_MAX : r->v[m]);
        pb_len(&e.msg, 2, e.sub.b, e.sub.n);
        const char *state = wall_state_of(p, s, t);
        if (state) { /* Label {key = "state", str = the state}: pprof -tagfocus=state=native */
            e.sub.n = 0;
            pb_uint(&e.sub, 1, str_ix(&e.strs, "state"));
            pb_uint(&e.sub, 2, str_ix(&e.strs, state));
            pb_len(&e.msg, 3, e.sub.b, e.sub.n);
        }
        pb_len(&e.out, 2, e.msg.b, e.msg.n);
    }
    free(locs);
    uint64_t rest = conv_rest(c);
    if (rest) {
        uint64_t id = p->nframes + 1 + intern_key(&e.leaves, "\1rest", 5);
        location(&e, id, function(&e, CONV_REST, CONV_REST, ""), 0);
        e.sub.n = 0;
        pb_varint(&e.sub, id);
        e.msg.n = 0;
        pb_len(&e.msg, 1, e.sub.b, e.sub.n);
        e.sub.n = 0;
        for (unsigned m = 0; m < nm; m++)
            pb_varint(&e.sub, m ? 0 : rest);
        pb_len(&e.msg, 2, e.sub.b, e.sub.n);
        pb_len(&e.out, 2, e.msg.b, e.msg.n);
    }

    uint64_t comment_ix = comment ? str_ix(&e.strs, comment) : 0;
    const char *type0, *unit0;
    conv_pprof_type(s->kind, 0, &type0, &unit0);
    uint64_t default_ix = str_ix(&e.strs, type0);
    for (size_t i = 0; i < e.strs.n; i++) {
        size_t len;
        memcpy(&len, e.strs.keys[i], sizeof len);
        pb_len(&e.out, 6, e.strs.keys[i] + sizeof len, len);
    }
    pb_uint(&e.out, 13, comment_ix);
    pb_uint(&e.out, 14, default_ix);
    if (e.out.oom || e.msg.oom || e.sub.oom || e.strs.oom || e.funcs.oom || e.leaves.oom) {
        errno = ENOMEM;
        goto done;
    }
    rc = gzip_to(e.out.b, e.out.n, out);
done:
    if (rc && !errno)
        errno = ENOMEM;
    free(e.frame_func);
    free(e.out.b);
    free(e.msg.b);
    free(e.sub.b);
    intern_free(&e.strs);
    intern_free(&e.funcs);
    intern_free(&e.leaves);
    return rc;
}
