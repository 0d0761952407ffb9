/*
 * phd-read: check an OpenJ9 portable heap dump (PHD, versions 4-6) strictly and summarise it;
 * a classic (text) heap dump, recognised by its first line, goes to tools/classic_read.c.
 * Written from the format notes (doc/phd.md, doc/tools.md), independently of the writer.
 *
 *     phd-read [--json] [--quiet] [--allow-dangling N] [--refs CLASS] [--max-reports N] FILE
 *
 * Every record kind is parsed; class addresses and references are resolved after the whole
 * file (writers put class records anywhere, the VM after the last object). Exit status:
 * 0 no errors (warnings allowed), 1 violations, 2 usage or I/O error.
 */
#include "classic_read.h"
#include "phd_histogram.h"
#include "reader/phd_parse.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_row_name(const void *a, const void *b)
{
    return strcmp(((const struct phd_class_count *)a)->name,
                  ((const struct phd_class_count *)b)->name);
}

static int cmp_row_bytes(const void *a, const void *b)
{
    const struct phd_class_count *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(o, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(o, "\\u%04x", ch);
        else
            fputc(ch, o);
    }
    fputc('"', o);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One row per name (counts and bytes summed), largest bytes first; returns the new count. */
static size_t merge_rows(struct phd_class_count *rows, size_t nrows)
{
    qsort(rows, nrows, sizeof *rows, cmp_row_name);
    size_t m = 0;
    for (size_t i = 0; i < nrows; i++) {
        if (m && strcmp(rows[m - 1].name, rows[i].name) == 0) {
            rows[m - 1].count += rows[i].count;
            rows[m - 1].bytes += rows[i].bytes;
            free(rows[i].name);
        } else {
            rows[m++] = rows[i];
        }
    }
    qsort(rows, m, sizeof *rows, cmp_row_bytes);
    return m;
}

bool phd_looks_like(const unsigned char *p, size_t n)
{
    return n >= 20 && p[0] == 0 && p[1] == 18 && memcmp(p + 2, "portable heap dump", 18) == 0;
}

void phd_histogram_free(struct phd_class_count *rows, size_t nrows)
{
    for (size_t i = 0; rows && i < nrows; i++)
        free(rows[i].name);
    free(rows);
}

int phd_histogram(const char *path, struct phd_class_count **rowsp, size_t *nrowsp, char *err,
                  size_t errlen)
{
    struct phd_file f;
    memset(&f, 0, sizeof f);
    f.path = path;
    f.max_reports = 0; /* count, print nothing */
    uint8_t *data = phd_slurp(path, &f.len, err, errlen);
    if (!data)
        return -1;
    f.p = data;
    bool is_phd = phd_looks_like(data, f.len);
    if (is_phd && phd_read_header(&f))
        phd_read_records(&f);
    struct phd_index ix = {NULL, 0};
    struct phd_class_count *rows = NULL;
    size_t nrows = 0;
    char *buf = malloc(65540);
    int rc = -1;
    if (!is_phd) {
        snprintf(err, errlen, "%s: not a PHD file (no \"portable heap dump\" at the start)", path);
        goto out;
    }
    if (f.oom || !buf || !phd_build_index(&f, &ix) ||
        !(rows = calloc(f.nrecs ? f.nrecs : 1, sizeof *rows))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (f.errors) {
        snprintf(err, errlen,
                 "%s: %" PRIu64 " violation%s of the PHD format (phd-read %s lists them)", path,
                 f.errors, f.errors == 1 ? "" : "s", path);
        goto out;
    }
    for (size_t i = 0; i < f.nrecs; i++) {
        const struct phd_rec *r = &f.recs[i];
        if (r->kind == PHD_K_CLASS)
            continue;
        rows[nrows].name = strdup(phd_type_name(&f, &ix, r, buf, 65540));
        rows[nrows].count = 1;
        rows[nrows].bytes = phd_rec_bytes(&f, &ix, r);
        if (!rows[nrows++].name) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    *rowsp = rows;
    *nrowsp = merge_rows(rows, nrows);
    rows = NULL;
    rc = 0;
out:
    phd_histogram_free(rows, nrows);
    free(buf);
    phd_free_file(&f, &ix);
    return rc;
}

/* The unit tests link this file and call it under another name. */
#ifndef PHD_READ_MAIN
#define PHD_READ_MAIN main
#endif
int PHD_READ_MAIN(int argc, char **argv);

int PHD_READ_MAIN(int argc, char **argv)
{
    bool json = false, quiet = false;
    const char *refs_of = NULL;
    struct phd_file f;
    memset(&f, 0, sizeof f);
    f.max_reports = 20;
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"allow-dangling", required_argument, NULL, 'd'},
                                          {"refs", required_argument, NULL, 'r'},
                                          {"max-reports", required_argument, NULL, 'm'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (ch) {
        case 'j':
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'd':
            f.allow_dangling = strtoull(optarg, NULL, 10);
            break;
        case 'r':
            refs_of = optarg;
            break;
        case 'm':
            f.max_reports = strtoull(optarg, NULL, 10);
            break;
        default:
            fprintf(ch == 'h' ? stdout : stderr,
                    "usage: phd-read [--json] [--quiet] [--allow-dangling N] [--refs CLASS] "
                    "[--max-reports N] FILE\n"
                    "  --json              print the summary as one JSON object\n"
                    "  --quiet             print no summary, only violations\n"
                    "  --allow-dangling N  up to N references to no record are not errors\n"
                    "  --refs CLASS        list the references of every object of CLASS\n"
                    "                      (slash form, e.g. pkg/Node or [Ljava/lang/Object;)\n"
                    "exit: 0 valid, 1 violations, 2 usage or I/O error\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "phd-read: one FILE expected (--help)\n");
        return 2;
    }
    f.path = argv[optind];
    char msg[300];
    uint8_t *data = phd_slurp(f.path, &f.len, msg, sizeof msg);
    if (!data) {
        fprintf(stderr, "phd-read: %s\n", msg);
        return 2;
    }
    f.p = data;
    if (f.len >= 12 && memcmp(data, "// Version: ", 12) == 0) {
        /* an OpenJ9 classic (text) heap dump */
        if (refs_of) {
            fprintf(stderr, "phd-read: --refs is for PHD files\n");
            free(data);
            return 2;
        }
        int rc = classic_read(f.path, data, f.len, json, quiet, f.allow_dangling, f.max_reports);
        free(data);
        return rc;
    }

    if (phd_read_header(&f))
        phd_read_records(&f);
    if (f.oom) {
        fprintf(stderr, "phd-read: out of memory\n");
        return 2;
    }

    /* addresses: unique, multiples of the unit */
    struct phd_index ix;
    if (!phd_build_index(&f, &ix)) {
        fprintf(stderr, "phd-read: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < f.nrecs; i++) {
        const struct phd_rec *r = &f.recs[ix.by_addr[i]];
        if (r->addr % f.unit)
            phd_violation(&f, true, r->off, "address %#" PRIx64 " is no multiple of %u", r->addr,
                          f.unit);
        if (i && f.recs[ix.by_addr[i - 1]].addr == r->addr)
            phd_violation(&f, true, r->off,
                          "address %#" PRIx64 " used by two records (the other at "
                          "offset %" PRIu64 ")",
                          r->addr, f.recs[ix.by_addr[i - 1]].off);
    }

    /* classes, references, counts */
    uint64_t n_obj = 0, n_oarr = 0, n_parr = 0, n_cls = 0, bytes = 0;
    struct phd_class_count *rows = calloc(f.nrecs ? f.nrecs : 1, sizeof *rows);
    size_t nrows = 0;
    char *buf = malloc(65540);
    char **refs_lines = NULL;
    size_t nlines = 0;
    if (!rows || !buf) {
        fprintf(stderr, "phd-read: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < f.nrecs; i++) {
        const struct phd_rec *r = &f.recs[i];
        uint64_t b = phd_rec_bytes(&f, &ix, r);
        switch (r->kind) {
        case PHD_K_CLASS:
            n_cls++;
            if (r->cls) {
                const struct phd_rec *sup = phd_find(&f, &ix, r->cls);
                if (!sup || sup->kind != PHD_K_CLASS)
                    phd_violation(&f, true, r->off,
                                  "class %s: superclass %#" PRIx64 " is no class record",
                                  phd_class_name(&f, r), r->cls);
            }
            break;
        case PHD_K_OBJECT:
        case PHD_K_OBJ_ARRAY: {
            const struct phd_rec *c = phd_find(&f, &ix, r->cls);
            if (!c || c->kind != PHD_K_CLASS)
                phd_violation(&f, true, r->off,
                              "%s at %#" PRIx64 ": class %#" PRIx64 " is no class record",
                              r->kind == PHD_K_OBJECT ? "object" : "object array", r->addr, r->cls);
            if (r->kind == PHD_K_OBJECT)
                n_obj++;
            else
                n_oarr++;
            /* IBM's reader drops a first reference equal to the class address. Hidden unless
             * the next one is the class too (a writer's copy for the reader to drop). */
            if (r->nrefs && f.refs[r->refs_at] == r->cls &&
                (r->nrefs == 1 || f.refs[r->refs_at + 1] != r->cls)) {
                f.ibm_hidden_refs++;
                phd_violation(&f, false, r->off,
                              "first reference equals the record's class address: IBM's reader "
                              "drops it");
            }
            break;
        }
        case PHD_K_PRIM_ARRAY:
            n_parr++;
            break;
        }
        for (uint32_t k = 0; k < r->nrefs; k++) {
            if (!phd_find(&f, &ix, f.refs[r->refs_at + k]))
                f.dangling++;
        }
        bytes += b;
        if (r->kind != PHD_K_CLASS) {
            const char *tn = phd_type_name(&f, &ix, r, buf, 65540);
            rows[nrows].name = strdup(tn);
            rows[nrows].count = 1;
            rows[nrows].bytes = b;
            if (!rows[nrows++].name) {
                fprintf(stderr, "phd-read: out of memory\n");
                return 2;
            }
            if (refs_of && strcmp(tn, refs_of) == 0) {
                /* "target target ..." sorted, one line per object */
                char **t = malloc((r->nrefs ? r->nrefs : 1) * sizeof *t);
                size_t tl = 1;
                for (uint32_t k = 0; t && k < r->nrefs; k++) {
                    const struct phd_rec *x = phd_find(&f, &ix, f.refs[r->refs_at + k]);
                    char b2[65540];
                    const char *nm = !x ? "?"
                                     : x->kind == PHD_K_CLASS
                                         ? phd_class_name(&f, x)
                                         : phd_type_name(&f, &ix, x, b2, sizeof b2);
                    if (x && x->kind == PHD_K_CLASS) {
                        snprintf(b2, sizeof b2, "class %s", phd_class_name(&f, x));
                        nm = b2;
                    }
                    t[k] = strdup(nm);
                    tl += strlen(nm) + 1;
                }
                if (t) {
                    qsort(t, r->nrefs, sizeof *t, cmp_str);
                    char *line = calloc(1, tl);
                    for (uint32_t k = 0; line && k < r->nrefs; k++) {
                        if (k)
                            strcat(line, " ");
                        strcat(line, t[k]);
                    }
                    for (uint32_t k = 0; k < r->nrefs; k++)
                        free(t[k]);
                    free(t);
                    char **nl = realloc(refs_lines, (nlines + 1) * sizeof *nl);
                    if (nl && line) {
                        refs_lines = nl;
                        refs_lines[nlines++] = line;
                    }
                }
            }
        }
    }
    if (f.dangling > f.allow_dangling)
        phd_violation(&f, true, 0,
                      "%" PRIu64 " references point to no record (allowed: %" PRIu64 ")",
                      f.dangling, f.allow_dangling);

    nrows = merge_rows(rows, nrows);
    if (refs_lines)
        qsort(refs_lines, nlines, sizeof *refs_lines, cmp_str);

    if (json) {
        printf("{\"file\":");
        json_str(stdout, f.path);
        printf(",\"version\":%d,\"flags\":%d,\"unit\":%u,\"full_version\":", f.version, f.flags,
               f.unit);
        json_str(stdout, f.full_version);
        printf(",\"bytes\":%zu,\"records\":%zu,\"classes\":%" PRIu64 ",\"objects\":%" PRIu64
               ",\"object_arrays\":%" PRIu64 ",\"primitive_arrays\":%" PRIu64
               ",\"references\":%zu,\"dangling\":%" PRIu64 ",\"hashes\":%" PRIu64
               ",\"ibm_hidden_references\":%" PRIu64 ",\"heap_bytes\":%" PRIu64
               ",\"errors\":%" PRIu64 ",\"warnings\":%" PRIu64 ",\"class_counts\":{",
               f.len, f.nrecs, n_cls, n_obj, n_oarr, n_parr, f.nrefs_all, f.dangling, f.hashes,
               f.ibm_hidden_refs, bytes, f.errors, f.warnings);
        for (size_t i = 0; i < nrows; i++) {
            if (i)
                putchar(',');
            json_str(stdout, rows[i].name);
            printf(":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", rows[i].count, rows[i].bytes);
        }
        printf("},\"refs\":[");
        for (size_t i = 0; i < nlines; i++) {
            if (i)
                putchar(',');
            json_str(stdout, refs_lines[i]);
        }
        printf("]}\n");
    } else if (!quiet) {
        printf("%s: PHD version %d, flags %d (%s-bit%s%s), unit %u bytes\n", f.path, f.version,
               f.flags, f.wide ? "64" : "32", f.flags & 4 ? ", J9" : "",
               f.flags & 2 ? ", all hashed" : "", f.unit);
        printf("full version: %s\n", f.full_version[0] ? f.full_version : "(none)");
        printf("records %zu: %" PRIu64 " classes, %" PRIu64 " objects, %" PRIu64
               " object arrays, %" PRIu64 " primitive arrays\n",
               f.nrecs, n_cls, n_obj, n_oarr, n_parr);
        printf("references %zu (%" PRIu64 " dangling), hashes %" PRIu64 ", heap bytes %" PRIu64
               "\n",
               f.nrefs_all, f.dangling, f.hashes, bytes);
        printf("%12s %14s  %s\n", "count", "bytes", "class");
        for (size_t i = 0; i < nrows; i++)
            printf("%12" PRIu64 " %14" PRIu64 "  %s\n", rows[i].count, rows[i].bytes, rows[i].name);
        for (size_t i = 0; i < nlines; i++)
            printf("refs of %s: %s\n", refs_of, refs_lines[i]);
        printf("errors %" PRIu64 ", warnings %" PRIu64 "\n", f.errors, f.warnings);
    }
    for (size_t i = 0; i < nrows; i++)
        free(rows[i].name);
    for (size_t i = 0; i < nlines; i++)
        free(refs_lines[i]);
    free(refs_lines);
    free(rows);
    free(buf);
    phd_free_file(&f, &ix);
    return f.errors ? 1 : 0;
}
