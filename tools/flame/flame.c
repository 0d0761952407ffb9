/*
 * flame.c: the frame tree (a hash of (parent, name, kind) -> node) and its HTML page: the
 * template (flame_template.html, embedded at build time as flame_template.h) with the title
 * and the tree as compact JSON spliced in. The page rebuilds the tree in typed arrays and
 * draws it on a <canvas>, skipping subtrees narrower than a pixel, so 100,000 stacks stay fast.
 */
#include "flame.h"

#include "flame_template.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct fnode {
    uint32_t parent, name; /* name: index into names */
    uint32_t first_child, next_sibling;
    uint8_t kind;
    uint64_t v[2];
};

struct flame_tree {
    unsigned nvalues;
    struct fnode *nodes;
    size_t nnodes, cap;
    char **names; /* interned */
    size_t nnames, names_cap;
    uint32_t *name_hash; /* open addressing: name index + 1, 0 = empty */
    size_t name_hash_cap;
    uint32_t *child_hash; /* open addressing: node index, FLAME_NONE = empty */
    size_t child_hash_cap;
};

static uint64_t hash_bytes(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static int grow(void **p, size_t *cap, size_t need, size_t elsz)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elsz);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static uint32_t *new_table(size_t cap, uint32_t empty)
{
    uint32_t *t = malloc(cap * sizeof *t);
    if (t)
        for (size_t i = 0; i < cap; i++)
            t[i] = empty;
    return t;
}

struct flame_tree *flame_tree_new(unsigned nvalues)
{
    if (nvalues < 1 || nvalues > 2)
        return NULL;
    struct flame_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nvalues = nvalues;
    t->name_hash_cap = t->child_hash_cap = 1024;
    t->name_hash = new_table(t->name_hash_cap, 0);
    t->child_hash = new_table(t->child_hash_cap, FLAME_NONE);
    char *all = strdup("all");
    if (!t->name_hash || !t->child_hash || !all ||
        grow((void **)&t->names, &t->names_cap, 1, sizeof *t->names) ||
        grow((void **)&t->nodes, &t->cap, 1, sizeof *t->nodes)) {
        free(all);
        flame_tree_free(t);
        return NULL;
    }
    t->names[t->nnames++] = all;
    t->nodes[t->nnodes++] = (struct fnode){.parent = FLAME_NONE,
                                           .first_child = FLAME_NONE,
                                           .next_sibling = FLAME_NONE,
                                           .kind = FLAME_OTHER};
    return t;
}

void flame_tree_free(struct flame_tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nnames; i++)
        free(t->names[i]);
    free(t->names);
    free(t->nodes);
    free(t->name_hash);
    free(t->child_hash);
    free(t);
}

/* index of name, added if new; FLAME_NONE on out of memory */
static uint32_t intern(struct flame_tree *t, const char *name)
{
    if (t->nnames * 2 >= t->name_hash_cap) {
        size_t cap = t->name_hash_cap * 2;
        uint32_t *h = new_table(cap, 0);
        if (!h)
            return FLAME_NONE;
        for (size_t i = 0; i < t->nnames; i++) {
            size_t j = hash_bytes(t->names[i]) & (cap - 1);
            while (h[j])
                j = (j + 1) & (cap - 1);
            h[j] = (uint32_t)i + 1;
        }
        free(t->name_hash);
        t->name_hash = h;
        t->name_hash_cap = cap;
    }
    size_t j = hash_bytes(name) & (t->name_hash_cap - 1);
    for (; t->name_hash[j]; j = (j + 1) & (t->name_hash_cap - 1))
        if (!strcmp(t->names[t->name_hash[j] - 1], name))
            return t->name_hash[j] - 1;
    char *copy = strdup(name);
    if (!copy || grow((void **)&t->names, &t->names_cap, t->nnames + 1, sizeof *t->names)) {
        free(copy);
        return FLAME_NONE;
    }
    t->names[t->nnames] = copy;
    t->name_hash[j] = (uint32_t)++t->nnames;
    return (uint32_t)(t->nnames - 1);
}

static size_t child_slot(const struct flame_tree *t, const uint32_t *tab, size_t cap,
                         uint32_t parent, uint32_t name, uint8_t kind)
{
    size_t j = mix(((uint64_t)parent << 8 | kind), name) & (cap - 1);
    for (; tab[j] != FLAME_NONE; j = (j + 1) & (cap - 1)) {
        const struct fnode *n = &t->nodes[tab[j]];
        if (n->parent == parent && n->name == name && n->kind == kind)
            break;
    }
    return j;
}

uint32_t flame_child(struct flame_tree *t, uint32_t parent, const char *name, enum flame_kind kind)
{
    if (parent >= t->nnodes)
        return FLAME_NONE;
    uint32_t nm = intern(t, name);
    if (nm == FLAME_NONE)
        return FLAME_NONE;
    if (t->nnodes * 2 >= t->child_hash_cap) {
        size_t cap = t->child_hash_cap * 2;
        uint32_t *h = new_table(cap, FLAME_NONE);
        if (!h)
            return FLAME_NONE;
        for (size_t i = 1; i < t->nnodes; i++) {
            const struct fnode *n = &t->nodes[i];
            h[child_slot(t, h, cap, n->parent, n->name, n->kind)] = (uint32_t)i;
        }
        free(t->child_hash);
        t->child_hash = h;
        t->child_hash_cap = cap;
    }
    size_t j = child_slot(t, t->child_hash, t->child_hash_cap, parent, nm, (uint8_t)kind);
    if (t->child_hash[j] != FLAME_NONE)
        return t->child_hash[j];
    if (t->nnodes >= FLAME_NONE - 1 ||
        grow((void **)&t->nodes, &t->cap, t->nnodes + 1, sizeof *t->nodes))
        return FLAME_NONE;
    uint32_t id = (uint32_t)t->nnodes++;
    t->nodes[id] = (struct fnode){.parent = parent,
                                  .name = nm,
                                  .first_child = FLAME_NONE,
                                  .next_sibling = t->nodes[parent].first_child,
                                  .kind = (uint8_t)kind};
    t->nodes[parent].first_child = id;
    t->child_hash[j] = id;
    return id;
}

void flame_add(struct flame_tree *t, uint32_t node, const uint64_t *v)
{
    for (; node != FLAME_NONE && node < t->nnodes; node = t->nodes[node].parent)
        for (unsigned i = 0; i < t->nvalues; i++)
            t->nodes[node].v[i] += v[i];
}

enum flame_kind flame_kind_of_class(const char *c)
{
    static const char *const jdk[] = {"java.", "javax.", "jdk.", "sun.", "com.sun."};
    for (size_t i = 0; i < sizeof jdk / sizeof *jdk; i++)
        if (!strncmp(c, jdk[i], strlen(jdk[i])))
            return FLAME_JDK;
    return FLAME_APP;
}

size_t flame_nodes(const struct flame_tree *t)
{
    return t->nnodes;
}

uint64_t flame_value(const struct flame_tree *t, uint32_t node, unsigned i)
{
    return node < t->nnodes && i < t->nvalues ? t->nodes[node].v[i] : 0;
}

/* ---- HTML ---------------------------------------------------------------------------- */

/* s as the body of a JSON string, safe inside <script> and HTML (<, >, & escaped) */
static void put_json_str(FILE *f, const char *s)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(f, "\\u%04x", c);
        else
            putc(c, f);
    }
    putc('"', f);
}

static void put_html(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            putc(*s, f);
        }
    }
}

static const struct flame_tree *sort_tree;
static int cmp_by_name(const void *a, const void *b)
{
    const struct fnode *x = &sort_tree->nodes[*(const uint32_t *)a];
    const struct fnode *y = &sort_tree->nodes[*(const uint32_t *)b];
    int c = strcmp(sort_tree->names[x->name], sort_tree->names[y->name]);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* The tree in preorder, siblings by name: [name, kind, nchildren, v0(, v1)] per node. */
static int put_tree(const struct flame_tree *t, FILE *f)
{
    uint32_t *stack = malloc(t->nnodes * sizeof *stack), *kids = malloc(t->nnodes * sizeof *kids);
    if (!stack || !kids) {
        free(stack);
        free(kids);
        errno = ENOMEM;
        return -1;
    }
    size_t sp = 0;
    stack[sp++] = FLAME_ROOT;
    bool first = true;
    sort_tree = t;
    while (sp) {
        uint32_t id = stack[--sp];
        const struct fnode *n = &t->nodes[id];
        size_t nk = 0;
        for (uint32_t c = n->first_child; c != FLAME_NONE; c = t->nodes[c].next_sibling)
            kids[nk++] = c;
        qsort(kids, nk, sizeof *kids, cmp_by_name);
        fprintf(f, "%s%u,%u,%zu,%llu", first ? "" : ",", n->name, n->kind, nk,
                (unsigned long long)n->v[0]);
        if (t->nvalues == 2)
            fprintf(f, ",%llu", (unsigned long long)n->v[1]);
        first = false;
        for (size_t i = nk; i-- > 0;) /* pushed last first: popped in name order */
            stack[sp++] = kids[i];
    }
    free(stack);
    free(kids);
    return 0;
}

int flame_write_html(const struct flame_tree *t, const struct flame_html_info *info, FILE *f)
{
    const char *tpl = flame_template;
    static const char *const marks[] = {"@TITLE@", "@SUBTITLE@", "@DATA@"};
    for (;;) { /* copy the template up to its next mark, then what the mark stands for */
        const char *at = NULL;
        size_t m = 0;
        for (size_t i = 0; i < 3; i++) {
            const char *x = strstr(tpl, marks[i]);
            if (x && (!at || x < at))
                at = x, m = i;
        }
        if (!at)
            break;
        fwrite(tpl, 1, (size_t)(at - tpl), f);
        tpl = at + strlen(marks[m]);
        if (m == 0)
            put_html(f, info->title);
        else if (m == 1)
            put_html(f, info->subtitle);
        else {
            fputs("{\"title\":", f);
            put_json_str(f, info->title ? info->title : "");
            fputs(",\"unit\":", f);
            put_json_str(f, info->unit ? info->unit : "");
            fprintf(f, ",\"nvalues\":%u,\"value_names\":[", t->nvalues);
            for (unsigned i = 0; i < t->nvalues; i++) {
                if (i)
                    putc(',', f);
                put_json_str(f, info->value_name[i] ? info->value_name[i] : "");
            }
            fputs("],\"kinds\":[\"other\",\"JDK\",\"application\",\"class\"],\"names\":[", f);
            for (size_t i = 0; i < t->nnames; i++) {
                if (i)
                    putc(',', f);
                put_json_str(f, t->names[i]);
            }
            fputs("],\"nodes\":[", f);
            if (put_tree(t, f))
                return -1;
            fputs("]}", f);
        }
    }
    fputs(tpl, f);
    return ferror(f) ? -1 : 0;
}
