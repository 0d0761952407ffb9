/* stacks.c: rows as stacks (frame names resolved once per frame), collapsed stacks, the tree. */
#include "convert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NO_STACK "[no stack]"

/* ';' separates frames in the collapsed format and a newline ends a line: neither may appear
 * in a name (they cannot in Java names, but a corrupt-free yet odd file could hold them) */
static void clean(char *s)
{
    for (; *s; s++)
        if (*s == ';' || *s == '\n' || *s == '\r')
            *s = ':';
}

static char *frame_name(const struct hprof_pframe *f, bool lines)
{
    char buf[64] = "";
    if (lines) {
        const char *src = f->source ? f->source : "Unknown Source";
        if (f->line > 0)
            snprintf(buf, sizeof buf, ":%" PRId32, f->line);
        else if (f->line == HPROF_LINE_NATIVE)
            src = "Native Method";
        size_t n = strlen(f->class_name) + strlen(f->method) + strlen(src) + strlen(buf) + 5;
        char *s = malloc(n);
        if (s) {
            snprintf(s, n, "%s.%s(%s%s)", f->class_name, f->method, src, buf);
            clean(s);
        }
        return s;
    }
    size_t n = strlen(f->class_name) + strlen(f->method) + 2;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, "%s.%s", f->class_name, f->method);
        clean(s);
    }
    return s;
}

int conv_init(struct conv *c, const struct hprof_profile *p, const struct hprof_section *s,
              bool lines)
{
    *c = (struct conv){.p = p, .s = s, .lines = lines};
    c->frame_names = calloc(p->nframes ? p->nframes : 1, sizeof *c->frame_names);
    c->frame_kinds = calloc(p->nframes ? p->nframes : 1, sizeof *c->frame_kinds);
    if (!c->frame_names || !c->frame_kinds) {
        conv_free(c);
        return -1;
    }
    for (size_t i = 0; i < p->nframes; i++) {
        if (!(c->frame_names[i] = frame_name(&p->frames[i], lines))) {
            conv_free(c);
            return -1;
        }
        c->frame_kinds[i] = flame_kind_of_class(p->frames[i].class_name);
    }
    return 0;
}

void conv_free(struct conv *c)
{
    if (c->frame_names)
        for (size_t i = 0; i < c->p->nframes; i++)
            free(c->frame_names[i]);
    free(c->frame_names);
    free(c->frame_kinds);
    c->frame_names = NULL;
    c->frame_kinds = NULL;
}

size_t conv_max_depth(const struct conv *c)
{
    size_t d = 0;
    for (size_t i = 0; i < c->p->ntraces; i++)
        if (c->p->traces[i].nframes > d)
            d = c->p->traces[i].nframes;
    return d + 2; /* + the leaf class, or "[no stack]" */
}

static bool has_leaf(enum hprof_section_kind k)
{
    return k == HPROF_SITES || k == HPROF_MONITOR_TIME;
}

size_t conv_stack(const struct conv *c, const struct hprof_row *r, const char **names,
                  enum flame_kind *kinds)
{
    size_t n = 0;
    if (c->s->kind == HPROF_CPU_METHODS) {
        names[n] = r->name ? r->name : NO_STACK;
        kinds[n++] = r->name ? flame_kind_of_class(r->name) : FLAME_OTHER;
        return n;
    }
    const struct hprof_ptrace *t =
        r->trace != HPROF_NO_TRACE && r->trace < c->p->ntraces ? &c->p->traces[r->trace] : NULL;
    if (!t || !t->nframes) {
        names[n] = NO_STACK;
        kinds[n++] = FLAME_OTHER;
    } else {
        for (uint32_t i = t->nframes; i-- > 0;) { /* the model keeps the leaf first */
            names[n] = c->frame_names[t->frames[i]];
            kinds[n++] = c->frame_kinds[t->frames[i]];
        }
    }
    if (has_leaf(c->s->kind) && r->name) {
        names[n] = r->name;
        kinds[n++] = FLAME_LEAF;
    }
    return n;
}

uint64_t conv_rest(const struct conv *c)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < c->s->nrows; i++)
        sum += c->s->rows[i].v[0];
    return c->s->total > sum ? c->s->total - sum : 0;
}

int conv_collapsed(const struct conv *c, unsigned m, FILE *out, uint64_t *sum)
{
    size_t max = conv_max_depth(c);
    const char **names = malloc(max * sizeof *names);
    enum flame_kind *kinds = malloc(max * sizeof *kinds);
    *sum = 0;
    if (!names || !kinds) {
        free(names);
        free(kinds);
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < c->s->nrows; i++) {
        const struct hprof_row *r = &c->s->rows[i];
        if (!r->v[m])
            continue;
        size_t n = conv_stack(c, r, names, kinds);
        for (size_t j = 0; j < n; j++) {
            if (j)
                putc(';', out);
            /* a leaf class name such as "[Ljava.lang.String;" keeps no ';' either */
            for (const char *s = names[j]; *s; s++)
                putc(*s == ';' || *s == '\n' ? ':' : *s, out);
        }
        fprintf(out, " %" PRIu64 "\n", r->v[m]);
        *sum += r->v[m];
    }
    uint64_t rest = m == 0 ? conv_rest(c) : 0;
    if (rest) {
        fprintf(out, "%s %" PRIu64 "\n", CONV_REST, rest);
        *sum += rest;
    }
    free(names);
    free(kinds);
    return ferror(out) ? -1 : 0;
}

struct flame_tree *conv_tree(const struct conv *c, unsigned m)
{
    size_t max = conv_max_depth(c);
    const char **names = malloc(max * sizeof *names);
    enum flame_kind *kinds = malloc(max * sizeof *kinds);
    struct flame_tree *t = flame_tree_new(1);
    if (!names || !kinds || !t)
        goto fail;
    for (size_t i = 0; i < c->s->nrows; i++) {
        const struct hprof_row *r = &c->s->rows[i];
        if (!r->v[m])
            continue;
        size_t n = conv_stack(c, r, names, kinds);
        uint32_t node = FLAME_ROOT;
        for (size_t j = 0; j < n && node != FLAME_NONE; j++)
            node = flame_child(t, node, names[j], kinds[j]);
        if (node == FLAME_NONE)
            goto fail;
        flame_add(t, node, &r->v[m]);
    }
    uint64_t rest = m == 0 ? conv_rest(c) : 0;
    if (rest) {
        uint32_t node = flame_child(t, FLAME_ROOT, CONV_REST, FLAME_OTHER);
        if (node == FLAME_NONE)
            goto fail;
        flame_add(t, node, &rest);
    }
    free(names);
    free(kinds);
    return t;
fail:
    free(names);
    free(kinds);
    flame_tree_free(t);
    errno = ENOMEM;
    return NULL;
}
