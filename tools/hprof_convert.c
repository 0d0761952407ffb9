/*
 * hprof-convert: one profile section of an hprof file (any format profile.h loads) as
 * collapsed stacks, an HTML flame graph or pprof (doc/tools.md). The output file is written
 * under a temporary name next to it and renamed at the end, so a failed run leaves nothing.
 */
#include "convert.h"
#include "flame.h"
#include "profile.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum out_format { OUT_AUTO, OUT_COLLAPSED, OUT_HTML, OUT_PPROF };

static const struct {
    const char *name; /* --kind */
    enum hprof_section_kind kind;
    const char *option; /* the agent option that writes it */
} kinds[] = {
    {"samples", HPROF_CPU_SAMPLES, "cpu=samples"}, {"times", HPROF_CPU_TIME, "cpu=times"},
    {"old", HPROF_CPU_METHODS, "cpu=old"},         {"sites", HPROF_SITES, "heap=sites"},
    {"monitor", HPROF_MONITOR_TIME, "monitor=y"},  {"wall", HPROF_WALL_SAMPLES, "wall=y"},
};
#define NKINDS (sizeof kinds / sizeof *kinds)

static void usage(FILE *f)
{
    fputs("usage: hprof-convert [options] FILE|-\n"
          "Converts one profile of an hprof file (ascii or binary, plain or gzip) into\n"
          "collapsed stacks, an HTML flame graph or pprof.\n"
          "  -t, --to FORMAT     collapsed, html or pprof (default: from the -o name: .html ->\n"
          "                      html, .pb.gz/.pprof -> pprof, else collapsed)\n"
          "  -o, --output FILE   write FILE (default: standard output)\n"
          "  -k, --kind KIND     samples (cpu=samples), times (cpu=times), old (cpu=old),\n"
          "                      sites (heap=sites), monitor (monitor=y), wall (wall=y);\n"
          "                      default: the first\n"
          "                      of these the file holds\n"
          "  -m, --measure NAME  the measure of collapsed and html (default: the kind's first):\n"
          "                      samples | time_ms, calls | self_ms, total_ms, calls |\n"
          "                      alloc_bytes, alloc_objects, live_bytes, live_objects |\n"
          "                      time_ms, entries; pprof holds them all\n"
          "  -n, --nth N         the N-th section of that kind (1 = first; default: the last)\n"
          "  -l, --lines         frame names with source file and line (collapsed, html)\n"
          "      --title TEXT    the HTML page's heading\n"
          "  -h, --help          this text\n"
          "Exit status: 0 done, 1 the input cannot be converted, 2 usage or output error.\n",
          f);
}

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hprof-convert: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static const char *unit_of(const char *measure)
{
    if (strstr(measure, "bytes"))
        return "bytes";
    if (strstr(measure, "objects"))
        return "objects";
    if (strstr(measure, "_ms"))
        return "ms";
    return measure; /* samples, calls, entries */
}

/* "1,234,567" */
static const char *commas(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

struct job {
    const char *path, *measure_name, *title;
    enum out_format to;
    const struct hprof_profile *p;
    const struct hprof_section *s;
    unsigned m;
    bool lines;
};

static int write_output(const struct job *j, FILE *out)
{
    struct conv c;
    if (conv_init(&c, j->p, j->s, j->lines))
        return -1;
    int rc = -1;
    const char *sname = hprof_section_name(j->s->kind);
    if (j->to == OUT_COLLAPSED) {
        uint64_t sum;
        rc = conv_collapsed(&c, j->m, out, &sum);
    } else if (j->to == OUT_PPROF) {
        char comment[512];
        snprintf(comment, sizeof comment, "hprof-convert %s: %s section %u of %u", j->path, sname,
                 j->s->index + 1, j->s->count);
        rc = conv_pprof(&c, comment, out);
    } else {
        struct flame_tree *t = conv_tree(&c, j->m);
        if (t) {
            const struct hprof_profile *p = j->p;
            char title[256], sub[1024], a[32], b[32];
            const char *opt = "";
            for (size_t k = 0; k < NKINDS; k++)
                if (kinds[k].kind == j->s->kind)
                    opt = kinds[k].option;
            if (j->title)
                snprintf(title, sizeof title, "%s", j->title);
            else
                snprintf(title, sizeof title, "%s (%s): %s", sname, opt, j->measure_name);
            /* the file keeps no option string: what it shows is which profiles were on, the
             * format and the deepest stack */
            char seen[128] = "";
            for (size_t k = 0; k < NKINDS; k++)
                if (p->sections[kinds[k].kind].present || p->sections[kinds[k].kind].count) {
                    strcat(seen, *seen ? "," : "");
                    strcat(seen, kinds[k].option);
                }
            if (p->sections[HPROF_HEAP_CLASSES].count)
                strcat(seen, *seen ? ",heap=dump" : "heap=dump");
            uint32_t depth = 0;
            for (size_t i = 0; i < p->ntraces; i++)
                if (p->traces[i].nframes > depth)
                    depth = p->traces[i].nframes;
            uint64_t shown = flame_value(t, FLAME_ROOT, 0);
            int n = snprintf(sub, sizeof sub,
                             "%s \u00b7 total %s %s in %zu rows \u00b7 run with %s,format=%c%s "
                             "\u00b7 deepest stack %" PRIu32 " frames \u00b7 section %u of %u",
                             j->path, commas(shown, a, sizeof a), unit_of(j->measure_name),
                             j->s->nrows, seen, p->binary ? 'b' : 'a', p->gzip ? " (gzip)" : "",
                             depth, j->s->index + 1, j->s->count);
            if (j->m == 0 && shown != j->s->total && n > 0 && (size_t)n < sizeof sub)
                snprintf(sub + n, sizeof sub - (size_t)n, " \u00b7 the header's total: %s",
                         commas(j->s->total, b, sizeof b));
            struct flame_html_info info = {
                .title = title, .subtitle = sub, .unit = unit_of(j->measure_name)};
            rc = flame_write_html(t, &info, out);
            flame_tree_free(t);
        }
    }
    conv_free(&c);
    return rc;
}

/* write_output to f, then fclose(f): 0, or -1 with the cause in *err (EIO when none known) */
static int write_and_close(const struct job *j, FILE *f, int *err)
{
    errno = 0;
    int rc = write_output(j, f);
    int e = errno;
    if (fclose(f) && !rc)
        rc = -1, e = errno;
    *err = e ? e : EIO;
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"to", required_argument, NULL, 't'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"kind", required_argument, NULL, 'k'},
                                             {"measure", required_argument, NULL, 'm'},
                                             {"nth", required_argument, NULL, 'n'},
                                             {"lines", no_argument, NULL, 'l'},
                                             {"title", required_argument, NULL, 'T'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct job j = {.to = OUT_AUTO};
    const char *output = NULL, *kind = NULL;
    unsigned long nth = 0;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:o:k:m:n:lh", longopts, NULL)) != -1) {
        switch (ch) {
        case 't':
            if (!strcmp(optarg, "collapsed"))
                j.to = OUT_COLLAPSED;
            else if (!strcmp(optarg, "html"))
                j.to = OUT_HTML;
            else if (!strcmp(optarg, "pprof"))
                j.to = OUT_PPROF;
            else
                return fail(2, "unknown output format '%s' (collapsed, html, pprof)", optarg);
            break;
        case 'o':
            output = optarg;
            break;
        case 'k':
            kind = optarg;
            break;
        case 'm':
            j.measure_name = optarg;
            break;
        case 'n': {
            char *end;
            errno = 0;
            nth = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || nth == 0 || nth > 1000000 || *optarg == '-')
                return fail(2, "--nth takes a number from 1 (the first section), not '%s'", optarg);
            break;
        }
        case 'l':
            j.lines = true;
            break;
        case 'T':
            j.title = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            return fail(2, "option '%s' needs a value (--help)", argv[optind - 1]);
        default:
            return fail(2, "unknown option '%s' (--help)", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return fail(2, optind == argc ? "no input file (--help)" : "one input file only (--help)");
    j.path = argv[optind];
    if (j.to == OUT_AUTO)
        j.to = output && (ends_with(output, ".html") || ends_with(output, ".htm")) ? OUT_HTML
               : output && (ends_with(output, ".pb.gz") || ends_with(output, ".pprof") ||
                            ends_with(output, ".pb"))
                   ? OUT_PPROF
                   : OUT_COLLAPSED;
    int want = -1;
    if (kind) {
        for (size_t k = 0; k < NKINDS; k++)
            if (!strcmp(kind, kinds[k].name))
                want = (int)kinds[k].kind;
        if (want < 0)
            return fail(2, "unknown kind '%s' (samples, times, old, sites, monitor)", kind);
    }

    char err[512];
    struct hprof_load_opts lo = {.nth = (unsigned)nth};
    struct hprof_profile *p = hprof_profile_load(j.path, &lo, err, sizeof err);
    if (!p)
        return fail(1, "%s", err);
    j.p = p;
    if (want < 0) {
        for (size_t k = 0; k < NKINDS && want < 0; k++)
            if (p->sections[kinds[k].kind].count)
                want = (int)kinds[k].kind;
        if (want < 0) {
            hprof_profile_free(p);
            return fail(1,
                        "%s holds no profile to convert%s: hprof-convert takes CPU SAMPLES "
                        "(cpu=samples), CPU TIME (cpu=times), CPU TIME BY METHOD (cpu=old), "
                        "SITES (heap=sites) or MONITOR TIME (monitor=y)",
                        j.path, p->sections[HPROF_HEAP_CLASSES].count ? " (only a heap dump)" : "");
        }
    }
    j.s = hprof_profile_section(p, (enum hprof_section_kind)want, j.path, err, sizeof err);
    if (!j.s) {
        hprof_profile_free(p);
        return fail(1, "%s", err);
    }
    unsigned nm = hprof_section_nmeasures(j.s->kind);
    if (j.measure_name) {
        j.m = nm;
        for (unsigned i = 0; i < nm; i++)
            if (!strcmp(j.measure_name, hprof_section_measure(j.s->kind, i)))
                j.m = i;
        if (j.m == nm) {
            char list[128] = "";
            for (unsigned i = 0; i < nm; i++) {
                strcat(list, i ? ", " : "");
                strcat(list, hprof_section_measure(j.s->kind, i));
            }
            hprof_profile_free(p);
            return fail(2, "%s has no measure '%s' (%s)", hprof_section_name(j.s->kind),
                        j.measure_name, list);
        }
    }
    j.measure_name = hprof_section_measure(j.s->kind, j.m);

    int rc;
    struct stat st;
    if (output && strcmp(output, "-") && lstat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device (/dev/null), a pipe or a symbolic link: written in place, never replaced
         * by a renamed file */
        FILE *f = fopen(output, "w");
        if (!f) {
            rc = fail(2, "cannot open %s: %s", output, strerror(errno));
        } else {
            int e;
            rc = write_and_close(&j, f, &e);
            if (rc)
                rc = fail(2, "writing %s failed: %s", output, strerror(e));
        }
    } else if (!output || !strcmp(output, "-")) {
        rc = write_output(&j, stdout);
        if (fflush(stdout) || rc)
            rc = fail(2, "writing the output failed: %s", strerror(errno ? errno : EIO));
    } else {
        size_t n = strlen(output) + 16;
        char *tmp = malloc(n);
        int fd = -1;
        FILE *f = NULL;
        if (tmp) {
            snprintf(tmp, n, "%s.tmp.XXXXXX", output);
            fd = mkstemp(tmp);
        }
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            rc = fail(2, "cannot create %s: %s", tmp ? tmp : output, strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
        } else {
            int e;
            rc = write_and_close(&j, f, &e);
            if (rc) {
                unlink(tmp);
                rc = fail(2, "writing %s failed: %s", output, strerror(e));
            } else if (rename(tmp, output)) {
                e = errno;
                unlink(tmp);
                rc = fail(2, "cannot rename %s to %s: %s", tmp, output, strerror(e));
            } else {
                /* mkstemp made it 0600; a converted profile is an ordinary file */
                mode_t um = umask(0);
                umask(um);
                chmod(output, 0666 & ~um);
            }
        }
        free(tmp);
    }
    hprof_profile_free(p);
    return rc;
}
