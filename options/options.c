/* Option string -> struct hprof_options (see options.h and doc/options.md).
 *
 * The string is split on ',' into items "name=value" (or the bare "help"); each name is
 * looked up in one table of descriptors whose setter checks and stores the value. Checks
 * that involve several options (restrictions, the default profile) run once at the end, so
 * they do not depend on the order of the items. */
#include "options.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEPTH 4
#define DEFAULT_INTERVAL_MS 10
#define DEFAULT_CUTOFF 0.0001

enum set_result { SET_OK, SET_BAD, SET_NOMEM };

struct opt_desc;
typedef enum set_result (*opt_setter)(struct hprof_options *o, const struct opt_desc *d,
                                      const char *value);

/* One accepted option. The generic setters (yes/no, integers) use field/min/max, so most
 * options need no code of their own. */
struct opt_desc {
    const char *name;
    const char *allowed; /* what the error message says is allowed */
    opt_setter set;
    size_t field; /* offsetof() into struct hprof_options, for the generic setters */
    uint64_t min, max;
};

/* ---- value parsers ------------------------------------------------------------------- */

/* Decimal digits only: no sign, no spaces, no hex, so "-1", " 5" and "0x10" are errors
 * rather than whatever strtoul would make of them. */
static bool parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10)
            return false; /* above max, and never wraps around */
        v = v * 10 + d;
    }
    if (v < min)
        return false;
    *out = v;
    return true;
}

/* [digits][.digits][(e|E)[+|-]digits] by hand, because strtod follows LC_NUMERIC: once the
 * VM has set a locale with a decimal comma (an attach with jcmd), strtod("0.0001") stops at
 * the '.'. Up to 19 significant digits are kept, plenty for a cutoff ratio. */
static bool parse_decimal(const char *s, double *out)
{
    uint64_t mant = 0;
    int sig = 0, digits = 0;
    long exp10 = 0;
    bool dot = false;

    for (;; s++) {
        if (*s == '.' && !dot) {
            dot = true;
        } else if (*s >= '0' && *s <= '9') {
            digits++;
            if (sig < 19) {
                if (mant != 0 || *s != '0')
                    sig++;
                mant = mant * 10 + (uint64_t)(*s - '0');
                if (dot)
                    exp10--;
            } else if (!dot) {
                exp10++; /* digits dropped before the point still scale the value */
            }
        } else {
            break;
        }
    }
    if (digits == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        bool neg = false;
        long e = 0;
        s++;
        if (*s == '+' || *s == '-')
            neg = *s++ == '-';
        if (*s < '0' || *s > '9')
            return false;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (e < 100000) /* far beyond any double; only keeps e from overflowing */
                e = e * 10 + (*s - '0');
        }
        exp10 += neg ? -e : e;
    }
    if (*s != '\0')
        return false;
    /* mant < 2^64 and one correctly rounded pow10 step: exact for everyday inputs. */
    double v = (double)mant;
    if (mant != 0)
        v = exp10 < 0 ? v / pow(10.0, (double)-exp10) : v * pow(10.0, (double)exp10);
    *out = v;
    return true;
}

/* ---- setters ------------------------------------------------------------------------- */

#define FIELD(o, d, type) ((type *)(void *)((char *)(o) + (d)->field))

static bool parse_yes_no(const char *v, bool *out)
{
    if (strcmp(v, "y") == 0 || strcmp(v, "n") == 0) {
        *out = v[0] == 'y';
        return true;
    }
    return false;
}

static enum set_result set_yes_no(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    return parse_yes_no(v, FIELD(o, d, bool)) ? SET_OK : SET_BAD;
}

static enum set_result set_int(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    uint64_t n;
    if (!parse_uint(v, d->min, d->max, &n))
        return SET_BAD;
    *FIELD(o, d, int) = (int)n;
    return SET_OK;
}

static enum set_result set_u64(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    uint64_t n;
    if (!parse_uint(v, d->min, d->max, &n))
        return SET_BAD;
    *FIELD(o, d, uint64_t) = n;
    return SET_OK;
}

static enum set_result set_heap(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    bool sites = strcmp(v, "sites") == 0, dump = strcmp(v, "dump") == 0;
    if (strcmp(v, "all") == 0)
        sites = dump = true;
    if (!sites && !dump)
        return SET_BAD;
    o->heap_sites = sites;
    o->heap_dump = dump;
    o->heap_given = true;
    return SET_OK;
}

static enum set_result set_cpu(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    if (strcmp(v, "samples") == 0)
        o->cpu = HPROF_CPU_SAMPLES;
    else if (strcmp(v, "times") == 0)
        o->cpu = HPROF_CPU_TIMES;
    else if (strcmp(v, "old") == 0)
        o->cpu = HPROF_CPU_OLD;
    else
        return SET_BAD;
    return SET_OK;
}

static enum set_result set_sampler(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    if (strcmp(v, "async") == 0)
        o->sampler = HPROF_SAMPLER_ASYNC;
    else if (strcmp(v, "safepoint") == 0)
        o->sampler = HPROF_SAMPLER_SAFEPOINT;
    else
        return SET_BAD;
    return SET_OK;
}

static enum set_result set_format(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    if (strcmp(v, "a") == 0)
        o->format = HPROF_FORMAT_ASCII;
    else if (strcmp(v, "b") == 0)
        o->format = HPROF_FORMAT_BINARY;
    else if (strcmp(v, "phd") == 0)
        o->format = HPROF_FORMAT_PHD;
    else if (strcmp(v, "classic") == 0)
        o->format = HPROF_FORMAT_CLASSIC;
    else
        return SET_BAD;
    return SET_OK;
}

static enum set_result set_file(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    if (*v == '\0')
        return SET_BAD;
    char *copy = strdup(v);
    if (copy == NULL)
        return SET_NOMEM;
    free(o->file); /* last one wins */
    o->file = copy;
    return SET_OK;
}

/* <host>:<port>, split at the last ':'; an IPv6 literal is written [addr]:port. */
static enum set_result set_net(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    const char *colon = strrchr(v, ':');
    uint64_t port;
    if (colon == NULL || !parse_uint(colon + 1, 1, HPROF_NET_PORT_MAX, &port))
        return SET_BAD;
    const char *host = v;
    size_t len = (size_t)(colon - v);
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        host++;
        len -= 2;
    }
    if (len == 0)
        return SET_BAD;
    char *copy = strndup(host, len);
    if (copy == NULL)
        return SET_NOMEM;
    free(o->net_host);
    o->net_host = copy;
    o->net_port = (uint16_t)port;
    return SET_OK;
}

static enum set_result set_cutoff(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    double c;
    if (!parse_decimal(v, &c) || !(c >= 0.0 && c <= 1.0))
        return SET_BAD;
    o->cutoff = c;
    return SET_OK;
}

/* Appends one line to o->warnings, once: repeating an option does not repeat its note. */
static void add_warning(struct hprof_options *o, const char *line)
{
    size_t used = strlen(o->warnings), len = strlen(line);
    if (strstr(o->warnings, line) != NULL || used + len + 2 > sizeof o->warnings)
        return;
    memcpy(o->warnings + used, line, len);
    o->warnings[used + len] = '\n';
    o->warnings[used + len + 1] = '\0';
}

/* Micro state accounting was a Solaris feature: msa=y is kept for old scripts, with a note. */
static enum set_result set_msa(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    if (!parse_yes_no(v, &o->msa))
        return SET_BAD;
    if (o->msa)
        add_warning(o, "HPROF WARNING: msa=y (Solaris micro state accounting) has no effect "
                       "on this platform");
    return SET_OK;
}

static enum set_result set_gc_okay(struct hprof_options *o, const struct opt_desc *d, const char *v)
{
    (void)d;
    bool ignored;
    if (!parse_yes_no(v, &ignored))
        return SET_BAD;
    add_warning(o, "HPROF WARNING: gc_okay is obsolete and ignored");
    return SET_OK;
}

/* wall_states= (wall_options.c) */
static enum set_result set_wall_states(struct hprof_options *o, const struct opt_desc *d,
                                       const char *v)
{
    (void)d;
    return options_parse_wall_states(v, &o->wall_states) ? SET_OK : SET_BAD;
}

static enum set_result set_wall_names(struct hprof_options *o, const struct opt_desc *d,
                                      const char *v)
{
    (void)d;
    if (*v == '\0' || strlen(v) > HPROF_WALL_NAMES_MAX)
        return SET_BAD;
    char *copy = strdup(v);
    if (!copy)
        return SET_NOMEM;
    free(o->wall_names);
    o->wall_names = copy;
    return SET_OK;
}

#define FIELD_OF(f) .field = offsetof(struct hprof_options, f)
#define YES_NO .allowed = "y|n", .set = set_yes_no

/* In the manual's order, then the obsolete option, then our extensions; the unknown-option
 * message lists the names in this order too. */
static const struct opt_desc option_table[] = {
    {.name = "heap", .allowed = "dump|sites|all", .set = set_heap},
    {.name = "cpu", .allowed = "samples|times|old", .set = set_cpu},
    {.name = "monitor", YES_NO, FIELD_OF(monitor)},
    {.name = "format", .allowed = "a|b|phd|classic", .set = set_format},
    {.name = "file", .allowed = "a non-empty file name", .set = set_file},
    {.name = "net",
     .allowed = "<host>:<port> with a host and a port from 1 to 65535",
     .set = set_net},
    {.name = "depth",
     .allowed = "an integer from 0 to 1024",
     .set = set_int,
     FIELD_OF(depth),
     .min = 0,
     .max = HPROF_DEPTH_MAX},
    {.name = "interval",
     .allowed = "an integer from 1 to 1000000 (milliseconds)",
     .set = set_int,
     FIELD_OF(interval_ms),
     .min = 1,
     .max = HPROF_INTERVAL_MAX_MS},
    {.name = "cutoff", .allowed = "a number from 0 to 1", .set = set_cutoff},
    {.name = "lineno", YES_NO, FIELD_OF(lineno)},
    {.name = "thread", YES_NO, FIELD_OF(thread)},
    {.name = "doe", YES_NO, FIELD_OF(doe)},
    {.name = "msa", .allowed = "y|n", .set = set_msa},
    {.name = "force", YES_NO, FIELD_OF(force)},
    {.name = "verbose", YES_NO, FIELD_OF(verbose)},
    {.name = "gc_okay", .allowed = "y|n", .set = set_gc_okay},
    {.name = "gz", YES_NO, FIELD_OF(gzip)},
    {.name = "sampler", .allowed = "async|safepoint", .set = set_sampler},
    {.name = "vmthreads", YES_NO, FIELD_OF(vm_threads)},
    {.name = "memory",
     .allowed = "an integer from 0 to 1048576 (MB; 0 = no budget)",
     .set = set_int,
     FIELD_OF(memory_mb),
     .min = 0,
     .max = HPROF_MEMORY_MAX_MB},
    {.name = "sites_interval",
     .allowed = "an integer from 0 to 1073741824 (bytes)",
     .set = set_u64,
     FIELD_OF(sites_interval),
     .min = 0,
     .max = HPROF_SITES_INTERVAL_MAX},
    {.name = "wall", YES_NO, FIELD_OF(wall)},
    {.name = "wall_interval",
     .allowed = "an integer from 1 to 1000000 (milliseconds)",
     .set = set_int,
     FIELD_OF(wall_interval_ms),
     .min = 1,
     .max = HPROF_INTERVAL_MAX_MS},
    {.name = "wall_states",
     .allowed = "state names joined by '+': running, runnable, blocked, waiting, parked, "
                "sleeping, native",
     .set = set_wall_states},
    {.name = "wall_names",
     .allowed = "a thread-name pattern of 1 to 256 characters (* and ? as in a shell)",
     .set = set_wall_names},
};

#define NOPTIONS (sizeof option_table / sizeof option_table[0])

static const struct opt_desc *find_option(const char *name)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (strcmp(option_table[i].name, name) == 0)
            return &option_table[i];
    }
    return NULL;
}

/* ---- parsing ------------------------------------------------------------------------- */

struct parse_state {
    struct hprof_error error;
    bool failed; /* only the first error is reported */
};

static void fail(struct parse_state *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct parse_state *ps, const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->error.text, sizeof ps->error.text, fmt, ap);
    va_end(ap);
}

static void fail_unknown(struct parse_state *ps, const char *name)
{
    char list[320] = "help"; /* all the names take about 200 bytes */
    for (size_t i = 0; i < NOPTIONS; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, ", %s", option_table[i].name);
    }
    /* the name is cut short so a long typo cannot push the allowed names out of err */
    fail(ps, "unknown option '%.64s' (allowed: %s)", name, list);
}

/* Handles one non-empty item; returns true if it is "help". */
static bool parse_item(struct parse_state *ps, struct hprof_options *o, char *item)
{
    char *eq = strchr(item, '=');
    if (eq != NULL)
        *eq = '\0';
    const char *name = item, *value = eq ? eq + 1 : NULL;

    if (strcmp(name, "help") == 0) {
        if (value == NULL)
            return true;
        fail(ps, "help option takes no value (help=%s)", value);
        return false;
    }
    const struct opt_desc *d = find_option(name);
    if (d == NULL) {
        fail_unknown(ps, name);
        return false;
    }
    if (value == NULL) {
        fail(ps, "%s option needs a value: %s (%s)", name, d->allowed, name);
        return false;
    }
    switch (d->set(o, d, value)) {
    case SET_OK:
        break;
    case SET_BAD:
        fail(ps, "%s option value must be %s (%s=%s)", name, d->allowed, name, value);
        break;
    case SET_NOMEM:
        fail(ps, "out of memory while parsing options (%s=%s)", name, value);
        break;
    }
    return false;
}

static const char *format_name(enum hprof_format f)
{
    return f == HPROF_FORMAT_PHD ? "phd" : f == HPROF_FORMAT_CLASSIC ? "classic" : "";
}

static const char *cpu_name(enum hprof_cpu_mode m)
{
    return m == HPROF_CPU_SAMPLES ? "samples" : m == HPROF_CPU_TIMES ? "times" : "old";
}

/* PHD and classic files hold one heap dump and nothing else: heap=dump is their default and
 * the only profile they can hold. */
static void finish_dump_only(struct parse_state *ps, struct hprof_options *o)
{
    const char *f = format_name(o->format);
    if (o->heap_given && o->heap_sites)
        fail(ps,
             "format=%s holds only a heap dump: heap=%s cannot be used with it (allowed: "
             "heap=dump)",
             f, o->heap_dump ? "all" : "sites");
    else if (o->cpu != HPROF_CPU_OFF)
        fail(ps,
             "format=%s holds only a heap dump: cpu=%s cannot be used with it (allowed: "
             "heap=dump)",
             f, cpu_name(o->cpu));
    else if (o->wall)
        fail(ps,
             "format=%s holds only a heap dump: wall=y cannot be used with it (allowed: "
             "heap=dump)",
             f);
    else if (o->monitor)
        fail(ps,
             "format=%s holds only a heap dump: monitor=y cannot be used with it (allowed: "
             "heap=dump)",
             f);
    o->heap_dump = true;
    o->heap_sites = false;
}

/* Checks that need the whole list; the defaults that depend on other options. */
static void finish(struct parse_state *ps, struct hprof_options *o)
{
    if (o->format == HPROF_FORMAT_PHD || o->format == HPROF_FORMAT_CLASSIC)
        finish_dump_only(ps, o);
    if (o->format == HPROF_FORMAT_BINARY) {
        if (o->monitor)
            fail(ps, "format=b cannot be used with monitor=y");
        if (o->cpu == HPROF_CPU_TIMES || o->cpu == HPROF_CPU_OLD)
            fail(ps, "format=b cannot be used with cpu=%s",
                 o->cpu == HPROF_CPU_TIMES ? "times" : "old");
    }
    if (o->gzip && o->format != HPROF_FORMAT_BINARY)
        fail(ps, "gz=y can only be used with format=b (the ascii output is not compressed)");
    /* one output only: silently preferring one of them would hide a mistake */
    if (o->file != NULL && o->net_host != NULL)
        fail(ps, "file and net options cannot be used together (file=%s, net=%s:%u)", o->file,
             o->net_host, (unsigned)o->net_port);
    /* the old agent's default profile: nothing asked for means heap=all */
    if (!o->heap_given && o->cpu == HPROF_CPU_OFF && !o->monitor && !o->wall && !ps->failed &&
        (o->format == HPROF_FORMAT_ASCII || o->format == HPROF_FORMAT_BINARY))
        o->heap_sites = o->heap_dump = true;
}

void options_defaults(struct hprof_options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->cpu = HPROF_CPU_OFF;
    opts->format = HPROF_FORMAT_ASCII;
    opts->depth = DEFAULT_DEPTH;
    opts->interval_ms = DEFAULT_INTERVAL_MS;
    opts->cutoff = DEFAULT_CUTOFF;
    opts->lineno = true;
    opts->doe = true;
    opts->force = true;
    opts->verbose = true;
    opts->vm_threads = true;
    opts->memory_mb = HPROF_MEMORY_DEFAULT_MB;
    opts->wall_interval_ms = HPROF_WALL_DEFAULT_INTERVAL_MS;
    opts->wall_states = HPROF_WALL_ALL_STATES;
}

void options_free(struct hprof_options *opts)
{
    free(opts->file);
    free(opts->net_host);
    free(opts->wall_names);
    options_defaults(opts);
}

struct hprof_error options_parse(const char *str, struct hprof_options *out)
{
    struct parse_state ps = {hprof_ok(), false};
    bool help = false;

    options_defaults(out);
    if (str == NULL)
        str = "";

    char *work = strdup(str); /* split in place */
    if (work == NULL) {
        fail(&ps, "out of memory while parsing options");
        return ps.error;
    }
    size_t len = strlen(work);
    if (len > 1 && work[len - 1] == ',')
        work[--len] = '\0'; /* "a=b," is tolerated: scripts that join with commas; "," not */

    if (len > 0) {
        char *item = work;
        for (;;) {
            char *comma = strchr(item, ',');
            if (comma != NULL)
                *comma = '\0';
            if (*item == '\0')
                fail(&ps,
                     "empty option in the list (%s): options are separated by single "
                     "commas",
                     str);
            else if (parse_item(&ps, out, item))
                help = true;
            if (comma == NULL)
                break;
            item = comma + 1;
        }
    }
    free(work);

    /* help wins over errors elsewhere: the table it prints is the answer to them */
    if (help) {
        options_free(out);
        out->help = true;
        return hprof_ok();
    }
    if (!ps.failed)
        finish(&ps, out);
    if (ps.failed)
        options_free(out);
    return ps.error;
}
