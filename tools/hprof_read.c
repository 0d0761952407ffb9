/*
 * hprof-read: check an HPROF binary file strictly and summarise it. See doc/tools.md.
 *
 *     hprof-read [--json] [--quiet] [--top N] [--lenient-traces] [--strict-threads]
 *                [--allow-dangling N] [--max-reports N] [--traces] FILE|-
 *
 * Exit status: 0 no errors (warnings allowed), 1 violations, 2 usage or I/O error.
 */
#include "hprof_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct shown {
    enum hprof_severity sev;
    enum hprof_kind kind;
    uint64_t off;
    char *msg;
};

struct ctx {
    FILE *err;
    const char *name;
    bool collect;
    struct shown *v;
    size_t n, cap;
    bool oom;
};

static void on_violation(void *vctx, enum hprof_severity sev, enum hprof_kind kind, uint64_t off,
                         const char *msg)
{
    struct ctx *c = vctx;
    fprintf(c->err, "%s:%" PRIu64 ": %s: [%s] %s\n", c->name, off,
            sev == HPROF_ERROR ? "error" : "warning", hprof_kind_name(kind), msg);
    if (!c->collect || c->oom)
        return;
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 64;
        struct shown *nv = realloc(c->v, nc * sizeof *nv);
        if (!nv) {
            c->oom = true;
            return;
        }
        c->v = nv;
        c->cap = nc;
    }
    char *m = strdup(msg);
    if (!m) {
        c->oom = true;
        return;
    }
    c->v[c->n++] = (struct shown){.sev = sev, .kind = kind, .off = off, .msg = m};
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                       */

/* Strings in an HPROF file are Java's modified UTF-8: NUL is C0 80 and characters outside the
   BMP are surrogate pairs of 3-byte sequences. Emit valid JSON for all of that; bytes that are
   not UTF-8 at all become U+FFFD. */
static void json_str(FILE *o, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', o);
    while (*s) {
        unsigned c = *s;
        if (c < 0x80) {
            if (c == '"' || c == '\\')
                fprintf(o, "\\%c", c);
            else if (c < 0x20)
                fprintf(o, "\\u%04x", c);
            else
                fputc((int)c, o);
            s++;
            continue;
        }
        unsigned need, cp;
        if (c >= 0xC0 && c < 0xE0) {
            need = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c < 0xF0) {
            need = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c < 0xF5) {
            need = 3;
            cp = c & 0x07;
        } else {
            fputs("\\ufffd", o);
            s++;
            continue;
        }
        unsigned i;
        for (i = 1; i <= need; i++) {
            if ((s[i] & 0xC0) != 0x80)
                break;
            cp = cp << 6 | (s[i] & 0x3F);
        }
        if (i <= need) {
            fputs("\\ufffd", o);
            s++;
            continue;
        }
        /* shortest forms only, except C0 80 (modified UTF-8's NUL); at most U+10FFFF */
        bool shortest = need == 1 ? cp >= 0x80 || cp == 0 : need == 2 ? cp >= 0x800 : cp >= 0x10000;
        if (!shortest || cp > 0x10FFFF) {
            fputs("\\ufffd", o);
            s++;
            continue;
        }
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            fprintf(o, "\\u%04x", cp); /* C0 80, and the halves of a surrogate pair */
        else
            fwrite(s, 1, need + 1, o);
        s += need + 1;
    }
    fputc('"', o);
}

static void json_key(FILE *o, const char *k)
{
    json_str(o, k);
    fputc(':', o);
}

static void print_json(FILE *o, const char *file, const struct hprof_summary *S,
                       const struct ctx *c)
{
    static const unsigned tags[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                    0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x1C, 0x2C};
    fputc('{', o);
    json_key(o, "file");
    json_str(o, file);
    fprintf(o, ",\"gzip\":%s,", S->gzip ? "true" : "false");
    json_key(o, "format");
    json_str(o, S->version);
    fprintf(o,
            ",\"id_size\":%" PRIu32 ",\"timestamp_ms\":%" PRIu64 ",\"bytes\":%" PRIu64
            ",\"records\":%" PRIu64 ",\"record_counts\":{",
            S->id_size, S->timestamp_ms, S->bytes, S->records);
    uint64_t unknown = S->records;
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
        fprintf(o, "%s\"%s\":%" PRIu64, i ? "," : "", hprof_tag_name(tags[i]),
                S->tag_counts[tags[i]]);
        unknown -= S->tag_counts[tags[i]];
    }
    fprintf(o, ",\"unknown\":%" PRIu64 "}", unknown);
    fprintf(o,
            ",\"strings\":%" PRIu64 ",\"classes\":%" PRIu64 ",\"classes_unloaded\":%" PRIu64
            ",\"frames\":%" PRIu64 ",\"traces\":%" PRIu64 ",\"threads_started\":%" PRIu64
            ",\"threads_ended\":%" PRIu64,
            S->strings, S->classes, S->classes_unloaded, S->frames, S->traces, S->threads_started,
            S->threads_ended);

    fputs(",\"alloc_sites\":", o);
    if (!S->alloc_sites_records) {
        fputs("null", o);
    } else {
        fprintf(o, "{\"records\":%" PRIu64 ",\"flags\":%u,\"cutoff\":", S->alloc_sites_records,
                (unsigned)S->sites_flags);
        if (isfinite(S->sites_cutoff))
            fprintf(o, "%.9g", (double)S->sites_cutoff);
        else
            fputs("null", o);
        fprintf(o,
                ",\"live_bytes\":%" PRIu32 ",\"live_instances\":%" PRIu32
                ",\"alloc_bytes\":%" PRIu64 ",\"alloc_instances\":%" PRIu64 ",\"sites\":%" PRIu32
                ",\"top\":[",
                S->sites_live_bytes, S->sites_live_instances, S->sites_alloc_bytes,
                S->sites_alloc_instances, S->nsites);
        for (size_t i = 0; i < S->nsite_rows; i++) {
            const struct hprof_site_row *r = &S->site_rows[i];
            fprintf(o, "%s{", i ? "," : "");
            json_key(o, "class");
            json_str(o, r->class_name);
            fprintf(o,
                    ",\"class_serial\":%" PRIu32 ",\"array_type\":%u,\"trace\":%" PRIu32
                    ",\"live_bytes\":%" PRIu32 ",\"live_instances\":%" PRIu32
                    ",\"alloc_bytes\":%" PRIu32 ",\"alloc_instances\":%" PRIu32 ",",
                    r->class_serial, (unsigned)r->array_type, r->trace, r->live_bytes,
                    r->live_instances, r->alloc_bytes, r->alloc_instances);
            json_key(o, "frame");
            json_str(o, r->frame);
            fputc('}', o);
        }
        fputs("]}", o);
    }

    fputs(",\"heap_summary\":", o);
    if (!S->heap_summary_records)
        fputs("null", o);
    else
        fprintf(o,
                "{\"records\":%" PRIu64 ",\"live_bytes\":%" PRIu32 ",\"live_instances\":%" PRIu32
                ",\"alloc_bytes\":%" PRIu64 ",\"alloc_instances\":%" PRIu64 "}",
                S->heap_summary_records, S->hs_live_bytes, S->hs_live_instances, S->hs_alloc_bytes,
                S->hs_alloc_instances);

    fputs(",\"cpu_samples\":", o);
    if (!S->cpu_samples_records) {
        fputs("null", o);
    } else {
        fprintf(o,
                "{\"records\":%" PRIu64 ",\"total\":%" PRIu32 ",\"traces\":%" PRIu32 ",\"top\":[",
                S->cpu_samples_records, S->cpu_total, S->cpu_ntraces);
        for (size_t i = 0; i < S->ncpu_rows; i++) {
            const struct hprof_sample_row *r = &S->cpu_rows[i];
            fprintf(o, "%s{\"trace\":%" PRIu32 ",\"count\":%" PRIu32 ",", i ? "," : "", r->trace,
                    r->count);
            json_key(o, "frame");
            json_str(o, r->frame);
            fputc('}', o);
        }
        fputs("]}", o);
    }

    fputs(",\"control_settings\":", o);
    if (!S->control_settings_records)
        fputs("null", o);
    else
        fprintf(o, "{\"records\":%" PRIu64 ",\"flags\":%" PRIu32 ",\"depth\":%u}",
                S->control_settings_records, S->control_flags, (unsigned)S->control_depth);

    fputs(",\"heap_dumps\":[", o);
    for (size_t i = 0; i < S->ndumps; i++) {
        const struct hprof_dump_summary *d = &S->dumps[i];
        fprintf(o,
                "%s{\"offset\":%" PRIu64 ",\"segmented\":%s,\"segments\":%" PRIu64
                ",\"bytes\":%" PRIu64 ",\"complete\":%s,\"classes\":%" PRIu64
                ",\"instances\":%" PRIu64 ",\"instance_bytes\":%" PRIu64
                ",\"object_arrays\":%" PRIu64 ",\"object_array_elements\":%" PRIu64
                ",\"primitive_arrays\":%" PRIu64 ",\"primitive_array_bytes\":%" PRIu64
                ",\"roots\":{",
                i ? "," : "", d->offset, d->segmented ? "true" : "false", d->segments, d->bytes,
                d->complete ? "true" : "false", d->classes, d->instances, d->instance_bytes,
                d->object_arrays, d->object_array_elements, d->primitive_arrays,
                d->primitive_array_bytes);
        for (int r = 0; r < HR_NKINDS; r++)
            fprintf(o, "%s\"%s\":%" PRIu64, r ? "," : "", hprof_root_name((enum hprof_root)r),
                    d->roots[r]);
        fprintf(o,
                "},\"roots_total\":%" PRIu64 ",\"references\":%" PRIu64 ",\"dangling\":%" PRIu64
                ",\"top_classes\":[",
                d->roots_total, d->references, d->dangling);
        for (size_t j = 0; j < d->ntop; j++) {
            const struct hprof_class_row *r = &d->top[j];
            fprintf(o, "%s{", j ? "," : "");
            json_key(o, "class");
            json_str(o, r->name);
            if (r->class_id)
                fprintf(o, ",\"class_id\":\"0x%" PRIx64 "\"", r->class_id);
            else
                fputs(",\"class_id\":null", o);
            fprintf(o, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", r->count, r->bytes);
        }
        fputs("],\"allocation_traces\":[", o);
        for (size_t j = 0; j < d->ntrace_rows; j++) {
            const struct hprof_trace_row *r = &d->trace_rows[j];
            fprintf(o, "%s{\"trace\":%" PRIu32 ",", j ? "," : "", r->trace);
            json_key(o, "class");
            json_str(o, r->name);
            fprintf(o, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", r->count, r->bytes);
        }
        fputs("]}", o);
    }
    fprintf(o, "],\"errors\":%" PRIu64 ",\"warnings\":%" PRIu64 ",\"violation_counts\":{",
            S->errors, S->warnings);
    uint64_t not_shown = 0;
    for (int k = 0; k < HK_NKINDS; k++) {
        fprintf(o, "%s\"%s\":%" PRIu64, k ? "," : "", hprof_kind_name((enum hprof_kind)k),
                S->kind_counts[k]);
        not_shown += S->kind_counts[k] - S->kind_shown[k];
    }
    fputs("},\"violations\":[", o);
    for (size_t i = 0; i < c->n; i++) {
        fprintf(o, "%s{\"severity\":\"%s\",\"kind\":\"%s\",\"offset\":%" PRIu64 ",", i ? "," : "",
                c->v[i].sev == HPROF_ERROR ? "error" : "warning", hprof_kind_name(c->v[i].kind),
                c->v[i].off);
        json_key(o, "message");
        json_str(o, c->v[i].msg);
        fputc('}', o);
    }
    fprintf(o, "],\"violations_not_shown\":%" PRIu64 "}\n", not_shown);
}

/* ------------------------------------------------------------------------------------------ */
/* Text                                                                                       */

static void print_text(FILE *o, const char *file, const struct hprof_summary *S)
{
    fprintf(o, "file:      %s%s\n", file, S->gzip ? " (gzip)" : "");
    char when[64] = "";
    time_t secs = (time_t)(S->timestamp_ms / 1000);
    struct tm tm;
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, " (%Y-%m-%d %H:%M:%S UTC)", &tm);
    fprintf(o, "format:    %s, id size %" PRIu32 ", timestamp %" PRIu64 "%s\n", S->version,
            S->id_size, S->timestamp_ms, when);
    fprintf(o, "bytes:     %" PRIu64 "%s\n", S->bytes, S->gzip ? " (uncompressed)" : "");
    fprintf(o, "records:   %" PRIu64 "\n", S->records);
    for (unsigned t = 0; t < 256; t++) {
        if (!S->tag_counts[t])
            continue;
        const char *n = hprof_tag_name(t);
        char unk[32];
        if (!n) {
            snprintf(unk, sizeof unk, "unknown 0x%02x", t);
            n = unk;
        }
        fprintf(o, "  %-20s %12" PRIu64 "\n", n, S->tag_counts[t]);
    }
    fprintf(o,
            "tables:    %" PRIu64 " strings, %" PRIu64 " classes (%" PRIu64 " unloaded), %" PRIu64
            " frames, %" PRIu64 " traces, %" PRIu64 " threads started, %" PRIu64 " ended\n",
            S->strings, S->classes, S->classes_unloaded, S->frames, S->traces, S->threads_started,
            S->threads_ended);
    if (S->control_settings_records)
        fprintf(o, "control:   flags 0x%" PRIx32 ", stack depth %u\n", S->control_flags,
                (unsigned)S->control_depth);
    if (S->heap_summary_records)
        fprintf(o,
                "heap summary: live %" PRIu32 " bytes / %" PRIu32 " instances, allocated %" PRIu64
                " bytes / %" PRIu64 " instances\n",
                S->hs_live_bytes, S->hs_live_instances, S->hs_alloc_bytes, S->hs_alloc_instances);
    if (S->alloc_sites_records) {
        fprintf(o,
                "\nALLOC SITES (%" PRIu64
                " record%s, the last shown): flags 0x%x, cutoff %g, %" PRIu32
                " sites\n  live %" PRIu32 " bytes / %" PRIu32 " instances, allocated %" PRIu64
                " bytes / %" PRIu64 " instances\n",
                S->alloc_sites_records, S->alloc_sites_records == 1 ? "" : "s",
                (unsigned)S->sites_flags, (double)S->sites_cutoff, S->nsites, S->sites_live_bytes,
                S->sites_live_instances, S->sites_alloc_bytes, S->sites_alloc_instances);
        if (S->nsite_rows)
            fprintf(o, "  %4s %12s %10s %12s %10s %8s  %s\n", "rank", "live bytes", "live objs",
                    "alloc bytes", "alloc objs", "trace", "class / top frame");
        for (size_t i = 0; i < S->nsite_rows; i++) {
            const struct hprof_site_row *r = &S->site_rows[i];
            fprintf(o,
                    "  %4zu %12" PRIu32 " %10" PRIu32 " %12" PRIu32 " %10" PRIu32 " %8" PRIu32
                    "  %s\n%55s%s\n",
                    i + 1, r->live_bytes, r->live_instances, r->alloc_bytes, r->alloc_instances,
                    r->trace, r->class_name, "", r->frame[0] ? r->frame : "(no frames)");
        }
    }
    if (S->cpu_samples_records) {
        fprintf(o,
                "\nCPU SAMPLES (%" PRIu64 " record%s, the last shown): total %" PRIu32 ", %" PRIu32
                " traces\n",
                S->cpu_samples_records, S->cpu_samples_records == 1 ? "" : "s", S->cpu_total,
                S->cpu_ntraces);
        if (S->ncpu_rows)
            fprintf(o, "  %4s %10s %7s %8s  %s\n", "rank", "count", "self", "trace", "top frame");
        for (size_t i = 0; i < S->ncpu_rows; i++) {
            const struct hprof_sample_row *r = &S->cpu_rows[i];
            double pct = S->cpu_total ? 100.0 * r->count / S->cpu_total : 0.0;
            fprintf(o, "  %4zu %10" PRIu32 " %6.2f%% %8" PRIu32 "  %s\n", i + 1, r->count, pct,
                    r->trace, r->frame[0] ? r->frame : "(no frames)");
        }
    }
    for (size_t i = 0; i < S->ndumps; i++) {
        const struct hprof_dump_summary *d = &S->dumps[i];
        fprintf(o, "\nheap dump %zu at offset %" PRIu64 ": %" PRIu64 " %s, %" PRIu64 " bytes%s\n",
                i + 1, d->offset, d->segments,
                d->segmented ? (d->segments == 1 ? "segment" : "segments") : "HEAP DUMP record",
                d->bytes, d->complete ? "" : " (incomplete: integrity checks skipped)");
        fprintf(o,
                "  classes %" PRIu64 ", instances %" PRIu64 " (%" PRIu64
                " field bytes), object arrays %" PRIu64 " (%" PRIu64
                " elements), primitive arrays %" PRIu64 " (%" PRIu64 " bytes)\n",
                d->classes, d->instances, d->instance_bytes, d->object_arrays,
                d->object_array_elements, d->primitive_arrays, d->primitive_array_bytes);
        fprintf(o, "  roots %" PRIu64 ":", d->roots_total);
        for (int r = 0; r < HR_NKINDS; r++)
            if (d->roots[r])
                fprintf(o, " %s %" PRIu64, hprof_root_name((enum hprof_root)r), d->roots[r]);
        fprintf(o, "\n  references %" PRIu64 ", dangling %" PRIu64 "\n", d->references,
                d->dangling);
        if (d->ntop)
            fprintf(o, "  %4s %12s %14s  %s\n", "rank", "count", "bytes", "class");
        for (size_t j = 0; j < d->ntop; j++)
            fprintf(o, "  %4zu %12" PRIu64 " %14" PRIu64 "  %s\n", j + 1, d->top[j].count,
                    d->top[j].bytes, d->top[j].name);
        if (d->ntrace_rows)
            fprintf(o, "  allocation traces:\n  %10s %12s %14s  %s\n", "trace", "count", "bytes",
                    "class");
        for (size_t j = 0; j < d->ntrace_rows; j++)
            fprintf(o, "  %10" PRIu32 " %12" PRIu64 " %14" PRIu64 "  %s\n", d->trace_rows[j].trace,
                    d->trace_rows[j].count, d->trace_rows[j].bytes, d->trace_rows[j].name);
    }
    fprintf(o, "\n%" PRIu64 " error%s, %" PRIu64 " warning%s\n", S->errors,
            S->errors == 1 ? "" : "s", S->warnings, S->warnings == 1 ? "" : "s");
}

/* ------------------------------------------------------------------------------------------ */

static void usage(FILE *o)
{
    fputs("usage: hprof-read [options] FILE|-\n"
          "Check an HPROF binary file (plain or gzip) strictly and print a summary.\n"
          "  --json               print the summary as one JSON object\n"
          "  -q, --quiet          print only the violations (on stderr)\n"
          "  --top N              rows in the top lists (default 10)\n"
          "  --lenient-traces     accept trace serials 0 or undefined in heap dump records,\n"
          "                       and LOAD CLASS trace serials defined by a later STACK TRACE\n"
          "                       (what HotSpot's own dumper writes)\n"
          "  --strict-threads     undefined thread serials are errors, not warnings\n"
          "  --allow-dangling N   up to N dangling references per heap dump are warnings\n"
          "  --max-reports N      messages shown per kind of violation (default 20, 0 = all)\n"
          "  --traces             count each heap dump's objects by the allocation trace\n"
          "                       serial their records carry, and class\n"
          "  -h, --help           this text\n"
          "Exit status: 0 no errors, 1 violations found, 2 usage or I/O error.\n",
          o);
}

static bool parse_num(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

int hprof_read_main(int argc, char **argv, FILE *out, FILE *err);

int hprof_read_main(int argc, char **argv, FILE *out, FILE *err)
{
    enum { O_JSON = 256, O_TOP, O_LENIENT, O_STRICT_THREADS, O_DANGLING, O_MAX_REPORTS, O_TRACES };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, O_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"top", required_argument, NULL, O_TOP},
        {"lenient-traces", no_argument, NULL, O_LENIENT},
        {"strict-threads", no_argument, NULL, O_STRICT_THREADS},
        {"allow-dangling", required_argument, NULL, O_DANGLING},
        {"max-reports", required_argument, NULL, O_MAX_REPORTS},
        {"traces", no_argument, NULL, O_TRACES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct hprof_opts opts = {.top_n = 10, .max_reports = 20};
    bool json = false, quiet = false;
    uint64_t v;
    optind = 0; /* re-entrant for the unit test */
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
        switch (ch) {
        case O_JSON:
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case O_LENIENT:
            opts.lenient_traces = true;
            break;
        case O_STRICT_THREADS:
            opts.strict_threads = true;
            break;
        case O_TRACES:
            opts.trace_counts = true;
            break;
        case O_TOP:
            if (!parse_num(optarg, 1000000, &v)) {
                fprintf(err, "hprof-read: --top needs a number from 0 to 1000000, not '%s'\n",
                        optarg);
                return 2;
            }
            opts.top_n = (unsigned)v;
            break;
        case O_DANGLING:
            if (!parse_num(optarg, UINT64_MAX, &v)) {
                fprintf(err, "hprof-read: --allow-dangling needs a number, not '%s'\n", optarg);
                return 2;
            }
            opts.allow_dangling = v;
            break;
        case O_MAX_REPORTS:
            if (!parse_num(optarg, UINT32_MAX, &v)) {
                fprintf(err, "hprof-read: --max-reports needs a number, not '%s'\n", optarg);
                return 2;
            }
            opts.max_reports = (unsigned)v;
            break;
        case 'h':
            usage(out);
            return 0;
        default:
            fprintf(err, "hprof-read: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(err);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(err, "hprof-read: expected exactly one FILE (or - for stdin)\n");
        usage(err);
        return 2;
    }
    const char *path = argv[optind];
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(err, "hprof-read: cannot open %s: %s\n", path, strerror(errno));
        return 2;
    }
    const char *name = is_stdin ? "<stdin>" : path;
    struct ctx c = {.err = err, .name = name, .collect = json};
    struct hprof_summary sum;
    char ebuf[256];
    int rc = hprof_parse_fd(fd, &opts, on_violation, &c, &sum, ebuf, sizeof ebuf);
    if (!is_stdin)
        close(fd);
    int status;
    if (rc != 0) {
        fprintf(err, "hprof-read: %s: %s\n", name, ebuf);
        status = 2;
    } else {
        status = sum.errors ? 1 : 0;
        uint64_t hidden = 0;
        for (int k = 0; k < HK_NKINDS; k++)
            hidden += sum.kind_counts[k] - sum.kind_shown[k];
        if (hidden)
            fprintf(err,
                    "%s: %" PRIu64 " more violations not shown (--max-reports %u per kind; "
                    "0 shows all)\n",
                    name, hidden, opts.max_reports);
        if (json)
            print_json(out, name, &sum, &c);
        else if (!quiet)
            print_text(out, name, &sum);
    }
    hprof_summary_free(&sum);
    for (size_t i = 0; i < c.n; i++)
        free(c.v[i].msg);
    free(c.v);
    if (fflush(out) != 0 && status == 0) {
        fprintf(err, "hprof-read: write error: %s\n", strerror(errno));
        status = 2;
    }
    return status;
}

#ifndef HPROF_READ_NO_MAIN
int main(int argc, char **argv)
{
    return hprof_read_main(argc, argv, stdout, stderr);
}
#endif
