/*
 * profile.h: any profile the hprof agent writes, loaded into one in-memory model.
 *
 * hprof_profile_load() reads a file (or "-" for stdin) in either output format: hprof ascii
 * (format=a) or HPROF binary (format=b), plain or gzip, including what hprof-listen saved from
 * a socket. It keeps the frames and traces and, per kind of section (CPU SAMPLES, CPU TIME,
 * CPU TIME BY METHOD, SITES, MONITOR TIME, the class histogram of a HEAP DUMP), the rows with
 * their measures. A file with several dumps gives the last section of each kind, or the one
 * asked for by index. Binary input goes through the strict reader (hprof_parse.h): a file
 * with any error is refused with its first violation.
 *
 * Shared by the converter and the comparison tools; C11 + zlib, no JVMTI.
 */
#ifndef HPROF_PROFILE_H
#define HPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Line number of a frame: > 0 a line, else one of these (the values of writer/writer.h and
 * of the binary STACK FRAME record) */
#ifndef HPROF_LINE_NONE
#define HPROF_LINE_NONE 0 /* no line information */
#define HPROF_LINE_UNKNOWN (-1)
#define HPROF_LINE_COMPILED (-2)
#define HPROF_LINE_NATIVE (-3)
#endif

/* One stack frame. Equal frames are stored once, so frame indexes can be compared. */
struct hprof_pframe {
    const char *class_name; /* "java.util.HashMap" (dots, as Java writes it) */
    const char *method;     /* "put" */
    const char *signature;  /* "(Ljava/lang/Object;)V"; "" when the format has none (ascii) */
    const char *source;     /* "HashMap.java"; NULL when unknown */
    int32_t line;           /* > 0, or HPROF_LINE_* */
};

/* One stack trace. */
struct hprof_ptrace {
    uint32_t serial;  /* as written: binary serial (1 = empty trace), ascii number (300000...) */
    uint32_t thread;  /* thread serial as written (binary 1..., ascii 200001...); 0 = not known */
    uint32_t nframes; /* 0 for the empty trace */
    const uint32_t *frames; /* indexes into hprof_profile.frames, top (leaf) frame first */
};

/* The kinds of sections, each with its measures (hprof_section_measure()). */
enum hprof_section_kind {
    HPROF_CPU_SAMPLES,  /* samples */
    HPROF_CPU_TIME,     /* time_ms, calls (cpu=times) */
    HPROF_CPU_METHODS,  /* self_ms, total_ms, calls (cpu=old: rows are methods, no trace) */
    HPROF_SITES,        /* alloc_bytes, alloc_objects, live_bytes, live_objects */
    HPROF_MONITOR_TIME, /* time_ms, entries (contended monitor entries) */
    HPROF_HEAP_CLASSES, /* instances, bytes (the class histogram of a heap dump) */
    HPROF_WALL_SAMPLES, /* samples (wall=y: ascii WALL SAMPLES; binary a CPU SAMPLES record
                           whose traces have a <wall> state pseudo-frame on top) */
    HPROF_NSECTIONS
};

#define HPROF_MAX_MEASURES 4
#define HPROF_NO_TRACE UINT32_MAX

struct hprof_row {
    uint32_t trace;        /* index into hprof_profile.traces, HPROF_NO_TRACE for CPU_METHODS and
                              HEAP_CLASSES rows (and a row whose trace the file never defined) */
    const char *name;      /* SITES: the allocated class ("int[]"); MONITOR_TIME: the monitor's
                              class; HEAP_CLASSES: the class; CPU_METHODS: "Class.method";
                              else NULL */
    const char *signature; /* CPU_METHODS: the method descriptor; else NULL */
    uint64_t v[HPROF_MAX_MEASURES]; /* in the order of the section's measures */
};

struct hprof_section {
    enum hprof_section_kind kind;
    bool present;   /* false: the file holds no section of this kind (or not at index) */
    unsigned count; /* how many sections of this kind the file holds */
    unsigned index; /* which one this is (0-based) */
    uint64_t total; /* the header's total: samples, ms (CPU_TIME, CPU_METHODS,
                       MONITOR_TIME), allocated bytes (SITES), bytes (HEAP_CLASSES) */
    size_t nrows;
    struct hprof_row *rows; /* in file order (ranked as the agent wrote them) */
};

struct hprof_profile {
    bool binary, gzip;
    size_t nframes;
    struct hprof_pframe *frames;
    size_t ntraces;
    struct hprof_ptrace *traces;
    struct hprof_section sections[HPROF_NSECTIONS];
    void *priv; /* the storage behind the strings and arrays */
};

struct hprof_load_opts {
    /* which section of each kind to keep: 0 (a zeroed struct) the last one, n > 0 the n-th
     * (so nth = 1 keeps the first; hprof_section.index is nth - 1) */
    unsigned nth;
};

/*
 * Load path ("-" = stdin). opts NULL = the last section of each kind. Returns the profile,
 * or NULL with one message in err ("x.hprof: truncated: input ends inside ...", "x: not an
 * hprof profile", ...). Never exits or aborts on bad input.
 */
struct hprof_profile *hprof_profile_load(const char *path, const struct hprof_load_opts *opts,
                                         char *err, size_t errlen);

/* The section of kind k, or NULL with a message in err ("no CPU SAMPLES in x", "x holds 2
 * CPU SAMPLES sections, index 5 asked for"). path is only used in the message. */
const struct hprof_section *hprof_profile_section(const struct hprof_profile *p,
                                                  enum hprof_section_kind k, const char *path,
                                                  char *err, size_t errlen);

void hprof_profile_free(struct hprof_profile *p);

/* "CPU SAMPLES", "CPU TIME", "CPU TIME BY METHOD", "SITES", "MONITOR TIME", "HEAP DUMP",
 * "WALL SAMPLES" */
const char *hprof_section_name(enum hprof_section_kind k);
/* number of measures of kind k, and the name of measure i ("samples", "time_ms", ...) */
unsigned hprof_section_nmeasures(enum hprof_section_kind k);
const char *hprof_section_measure(enum hprof_section_kind k, unsigned i);

#endif
