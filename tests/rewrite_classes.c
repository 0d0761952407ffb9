/* rewrite_classes: runs the class-file rewriter over class files and directory trees of them (for
 * example a `jimage extract` of a JDK), checks every input and output with classfile_check, and
 * optionally writes the rewritten tree elsewhere. A test helper (java-tests/rewriter uses it to
 * build rewritten JDK modules and fixtures for the JVM's verifier) and a debugging aid.
 *
 * usage: rewrite_classes [options] <file-or-dir>...
 *   --out DIR          write every class (rewritten or, when left unchanged, the original) to
 *                      DIR/<path relative to the argument>
 *   --tracker NAME     tracker class (default hprof/Tracker)
 *   --skip             apply rewriter_should_skip (by the class's path name)
 *   --quiet            only the summary
 *   --map FILE         write "cnum mnum class method descriptor" for every instrumented method
 *   --first-cnum N     class number of the first class (default 1; then one per class)
 * Exit status: 0 when every class was read, rewritten or deliberately left alone, and every
 * output passed the check; 1 otherwise. */
#include "classfile_check.h"
#include "classfile_rewriter.h"

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct {
    const char *out;
    const char *tracker;
    FILE *map;
    bool skip;
    bool quiet;
    size_t root_len;
    unsigned long classes, rewritten, unchanged, errors, bad_input, bad_output, skipped_classes;
    unsigned long methods, instrumented, skipped_methods;
    uint32_t cnum;
} g;

static int read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 65536, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (!b) {
            fclose(f);
            return -1;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *nb = realloc(b, cap);
        if (!nb)
            free(b);
        b = nb;
    }
    fclose(f);
    *data = b;
    *len = n;
    return 0;
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0777) < 0 && errno != EEXIST) {
                *p = '/';
                return -1;
            }
            *p = '/';
        }
    }
    return 0;
}

static void write_out(const char *rel, const uint8_t *data, size_t len)
{
    if (!g.out)
        return;
    size_t n = strlen(g.out) + strlen(rel) + 2;
    char *path = malloc(n);
    if (!path)
        return;
    snprintf(path, n, "%s/%s", g.out, rel);
    FILE *f = NULL;
    if (mkdirs(path) == 0)
        f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "rewrite_classes: cannot write %s\n", path);
        g.errors++;
    }
    if (f)
        fclose(f);
    free(path);
}

static void one_class(const char *path, const char *rel)
{
    uint8_t *data;
    size_t len;
    char err[256];
    g.classes++;
    if (read_file(path, &data, &len) < 0) {
        fprintf(stderr, "%s: cannot read\n", path);
        g.errors++;
        return;
    }
    if (classfile_check(data, len, err, sizeof(err)) < 0) {
        if (!g.quiet)
            fprintf(stderr, "%s: input fails the check: %s\n", rel, err);
        g.bad_input++;
    }
    /* The class name from the path, for --skip (module/pkg/Name.class or pkg/Name.class). */
    if (g.skip) {
        char name[1024];
        snprintf(name, sizeof(name), "%s", rel);
        size_t n = strlen(name);
        if (n > 6)
            name[n - 6] = 0;
        const char *p = name;
        while (p && *p) {
            if (rewriter_should_skip(p)) {
                g.skipped_classes++;
                write_out(rel, data, len);
                free(data);
                return;
            }
            p = strchr(p, '/');
            if (p)
                p++;
        }
    }
    struct rewrite_config cfg = {
        .tracker_class = g.tracker,
        .entry_name = "methodEntry",
        .entry_desc = "(II)V",
        .exit_name = "methodExit",
        .exit_desc = "(II)V",
        .class_number = g.cnum++,
    };
    struct rewrite_result res;
    int rc = classfile_rewrite(data, len, &cfg, &res, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "%s: rewrite error: %s\n", rel, err);
        g.errors++;
        write_out(rel, data, len);
    } else if (rc == 1) {
        g.unchanged++;
        write_out(rel, data, len);
    } else {
        g.rewritten++;
        if (classfile_check(res.bytes, res.len, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s: OUTPUT fails the check: %s\n", rel, err);
            g.bad_output++;
        }
        write_out(rel, res.bytes, res.len);
        if (g.map) {
            char cname[1024];
            snprintf(cname, sizeof(cname), "%s", rel);
            size_t n = strlen(cname);
            if (n > 6)
                cname[n - 6] = 0;
            for (uint32_t i = 0; i < res.nmethods; i++)
                if (res.instrumented[i])
                    fprintf(g.map, "%u %u %s %s %s\n", cfg.class_number, i, cname,
                            res.method_names[i], res.method_descs[i]);
        }
    }
    g.methods += res.nmethods;
    for (uint32_t i = 0; i < res.nmethods; i++)
        g.instrumented += res.instrumented[i];
    g.skipped_methods += res.skipped;
    if (res.skipped && !g.quiet)
        fprintf(stderr, "%s: %u method(s) left unchanged\n", rel, res.skipped);
    rewrite_result_free(&res);
    free(data);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (type == FTW_F && n > 6 && strcmp(path + n - 6, ".class") == 0) {
        const char *rel = path + g.root_len;
        while (*rel == '/')
            rel++;
        one_class(path, rel);
    }
    return 0;
}

int main(int argc, char **argv)
{
    g.tracker = "hprof/Tracker";
    g.cnum = 1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            g.out = argv[++i];
        else if (strcmp(argv[i], "--tracker") == 0 && i + 1 < argc)
            g.tracker = argv[++i];
        else if (strcmp(argv[i], "--skip") == 0)
            g.skip = true;
        else if (strcmp(argv[i], "--quiet") == 0)
            g.quiet = true;
        else if (strcmp(argv[i], "--first-cnum") == 0 && i + 1 < argc)
            g.cnum = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--map") == 0 && i + 1 < argc) {
            g.map = fopen(argv[++i], "w");
            if (!g.map) {
                fprintf(stderr, "rewrite_classes: cannot write %s\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "rewrite_classes: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i == argc) {
        fprintf(
            stderr,
            "usage: rewrite_classes [--out DIR] [--tracker NAME] [--skip] [--quiet] [--map FILE] "
            "[--first-cnum N] "
            "<file-or-dir>...\n");
        return 2;
    }
    for (; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
            g.errors++;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            g.root_len = strlen(argv[i]);
            nftw(argv[i], visit, 32, FTW_PHYS);
        } else {
            const char *base = strrchr(argv[i], '/');
            one_class(argv[i], base ? base + 1 : argv[i]);
        }
    }
    printf("classes %lu: rewritten %lu, unchanged %lu, skip-listed %lu, errors %lu, "
           "inputs failing the check %lu, outputs failing the check %lu; methods %lu, "
           "instrumented %lu, left unchanged %lu\n",
           g.classes, g.rewritten, g.unchanged, g.skipped_classes, g.errors, g.bad_input,
           g.bad_output, g.methods, g.instrumented, g.skipped_methods);
    if (g.map)
        fclose(g.map);
    return (g.errors || g.bad_output) ? 1 : 0;
}
