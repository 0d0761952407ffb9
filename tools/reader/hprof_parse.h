/*
 * hprof_parse: a strict, streaming reader of HPROF binary files (plain or gzip).
 *
 * It reads the whole input once, checks every rule listed in doc/tools.md, reports each
 * violation through a callback with its byte offset (in the uncompressed stream), and fills
 * a summary (counts, top allocation sites, top CPU sample traces, per heap dump statistics).
 * A tool that builds its own model of the file passes a struct hprof_visitor (below) to see
 * the records as they are read; profile.h is such a model. Pure C11 + zlib; no JVMTI.
 */
#ifndef HPROF_PARSE_H
#define HPROF_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hprof_severity { HPROF_WARNING = 0, HPROF_ERROR = 1 };

/* Kinds of violations; hprof_kind_name() gives the stable name used in --json. */
enum hprof_kind {
    HK_GZIP,         /* "gzip": corrupt or truncated gzip data */
    HK_HEADER,       /* "header": bad format name, id size */
    HK_TRUNCATED,    /* "truncated": input ends inside the header or a record */
    HK_UNKNOWN_TAG,  /* "unknown-tag": top-level record tag not in the spec */
    HK_LENGTH,       /* "length": record body length does not match its structure */
    HK_ZERO_LENGTH,  /* "zero-length": record of length 0 other than HEAP DUMP END */
    HK_DUPLICATE,    /* "duplicate": string id, frame id, trace/class/thread serial defined twice */
    HK_ZERO_ID,      /* "zero-id": id or serial 0 where 0 is reserved */
    HK_STRING,       /* "undefined-string": string id not defined by an earlier STRING */
    HK_CLASS_SERIAL, /* "undefined-class": class serial not defined by an earlier LOAD CLASS */
    HK_FRAME,        /* "undefined-frame": frame id not defined by an earlier STACK FRAME */
    HK_TRACE,        /* "undefined-trace": trace serial 0 or not defined by an earlier trace */
    HK_THREAD,       /* "undefined-thread": thread serial not defined by START THREAD */
    HK_SEGMENT,      /* "segment": HEAP DUMP SEGMENT / HEAP DUMP END sequence broken */
    HK_SUBRECORD,    /* "subrecord": unknown heap-dump sub-record tag or basic type */
    HK_STRADDLE,     /* "straddle": sub-record crossing the end of its (segment) record */
    HK_CLASS_DUMP,   /* "class-dump": CLASS DUMP without LOAD CLASS, bad superclass chain */
    HK_INSTANCE,     /* "instance-class": INSTANCE/OBJECT ARRAY DUMP of a class not dumped */
    HK_FIELD_SIZE,   /* "field-size": instance value bytes != sum of instance field sizes */
    HK_DANGLING,     /* "dangling": reference to an object that is not in the dump */
    HK_DUP_OBJECT,   /* "duplicate-object": same object id dumped twice */
    HK_NKINDS
};

const char *hprof_kind_name(enum hprof_kind k);

/* Called once per shown violation (see max_reports). offset is in the uncompressed stream. */
typedef void (*hprof_report_fn)(void *ctx, enum hprof_severity sev, enum hprof_kind kind,
                                uint64_t offset, const char *msg);

struct hprof_visitor;

struct hprof_opts {
    bool lenient_traces;     /* see doc/tools.md: relaxes heap-dump and LOAD CLASS traces */
    bool strict_threads;     /* undefined thread serials are errors, not warnings */
    uint64_t allow_dangling; /* up to this many dangling references per dump are warnings */
    unsigned top_n;          /* rows in the top lists */
    unsigned max_reports;    /* messages shown per kind (0 = all); all are counted */
    bool trace_counts;       /* objects of each dump by trace serial and class (trace_rows) */
    const struct hprof_visitor *visit; /* optional: sees the records as they are read */
};

/* Root kinds, in this order in hprof_dump_summary.roots[] */
enum hprof_root {
    HR_UNKNOWN,
    HR_JNI_GLOBAL,
    HR_JNI_LOCAL,
    HR_JAVA_FRAME,
    HR_NATIVE_STACK,
    HR_STICKY_CLASS,
    HR_THREAD_BLOCK,
    HR_MONITOR_USED,
    HR_THREAD_OBJECT,
    HR_NKINDS
};
const char *hprof_root_name(enum hprof_root r); /* "unknown", "jni_global", ... */
const char *hprof_tag_name(unsigned tag);       /* "STRING", ...; NULL for unknown tags */
/* "int", ...; NULL if invalid (named apart from writer.h's writer_common_type_name: a tool may link
 * both)
 */
const char *hprof_basic_type_name(unsigned basic_type);

struct hprof_site_row {
    char *class_name; /* resolved via LOAD CLASS -> STRING; "?" if unresolvable */
    char *frame;      /* top frame of the trace, "" if none */
    uint8_t array_type;
    uint32_t class_serial, trace;
    uint32_t live_bytes, live_instances, alloc_bytes, alloc_instances;
};

struct hprof_sample_row {
    char *frame;
    uint32_t trace, count;
};

struct hprof_class_row {
    char *name;        /* class name, or "int[]" etc. for primitive arrays */
    uint64_t class_id; /* 0 for primitive arrays */
    uint64_t count, bytes;
};

struct hprof_trace_row {
    uint32_t trace;
    char *name;            /* class name, or "int[]" etc. for primitive arrays */
    uint64_t count, bytes; /* bytes: of the records' values or elements */
};

struct hprof_dump_summary {
    uint64_t offset; /* of the first HEAP DUMP / HEAP DUMP SEGMENT record */
    bool segmented;  /* 0x1C..0x2C rather than one 0x0C record */
    bool complete;   /* every sub-record parsed (integrity checks ran) */
    uint64_t segments, bytes;
    uint64_t classes, instances, instance_bytes;
    uint64_t object_arrays, object_array_elements;
    uint64_t primitive_arrays, primitive_array_bytes;
    uint64_t roots[HR_NKINDS], roots_total;
    uint64_t references, dangling;
    size_t ntop;
    struct hprof_class_row *top;
    /* With trace_counts: instances and arrays by the trace serial they carry and their class,
     * ordered by trace serial, then class name. */
    size_t ntrace_rows;
    struct hprof_trace_row *trace_rows;
};

struct hprof_summary {
    char version[32];
    uint32_t id_size;
    uint64_t timestamp_ms;
    bool gzip;
    uint64_t bytes; /* uncompressed bytes read */
    uint64_t records;
    uint64_t tag_counts[256];
    uint64_t strings, classes, classes_unloaded, frames, traces, threads_started, threads_ended;

    uint64_t alloc_sites_records; /* the fields below describe the last one */
    uint16_t sites_flags;
    float sites_cutoff;
    uint32_t sites_live_bytes, sites_live_instances;
    uint64_t sites_alloc_bytes, sites_alloc_instances;
    uint32_t nsites;
    size_t nsite_rows;
    struct hprof_site_row *site_rows;

    uint64_t heap_summary_records; /* last one */
    uint32_t hs_live_bytes, hs_live_instances;
    uint64_t hs_alloc_bytes, hs_alloc_instances;

    uint64_t cpu_samples_records; /* last one */
    uint32_t cpu_total, cpu_ntraces;
    size_t ncpu_rows;
    struct hprof_sample_row *cpu_rows;

    uint64_t control_settings_records; /* last one */
    uint32_t control_flags;
    uint16_t control_depth;

    size_t ndumps;
    struct hprof_dump_summary *dumps;

    uint64_t errors, warnings;
    uint64_t kind_counts[HK_NKINDS]; /* violations of each kind (errors and warnings) */
    uint64_t kind_shown[HK_NKINDS];  /* how many of them were passed to the callback */
};

/* One ALLOC SITES row, as in the record. */
struct hprof_site_rec {
    uint8_t array_type; /* 0 not an array, else the basic type of the elements */
    uint32_t class_serial, trace;
    uint32_t live_bytes, live_instances, alloc_bytes, alloc_instances;
};

/* One CPU SAMPLES row. */
struct hprof_sample_rec {
    uint32_t count, trace;
};

/*
 * A record observer (hprof_opts.visit) for tools that build their own model of the file
 * (profile.h does). Each hook is called once a record has passed its length checks, in file
 * order; ids and serials are as written (not checked: the violations are reported as usual).
 * Any hook may be NULL. Strings longer than 4096 bytes are cut to their first 4096 bytes.
 */
struct hprof_visitor {
    void *ctx;
    void (*string)(void *ctx, uint64_t id, const char *utf8, size_t len);
    void (*load_class)(void *ctx, uint32_t class_serial, uint64_t class_id, uint64_t name_id);
    void (*frame)(void *ctx, uint64_t frame_id, uint64_t method_id, uint64_t sig_id,
                  uint64_t source_id, uint32_t class_serial, int32_t line);
    /* frame_ids: top frame first */
    void (*trace)(void *ctx, uint32_t serial, uint32_t thread_serial, uint32_t nframes,
                  const uint64_t *frame_ids);
    /* one ALLOC SITES record: its totals, then its rows in order */
    void (*sites)(void *ctx, uint16_t flags, uint64_t alloc_bytes, uint64_t alloc_instances,
                  uint32_t live_bytes, uint32_t live_instances, size_t n,
                  const struct hprof_site_rec *rows);
    /* one CPU SAMPLES record, rows in order */
    void (*cpu_samples)(void *ctx, uint32_t total, size_t n, const struct hprof_sample_rec *rows);
    /* the end of one heap dump: d's counts, and every class with instances (primitive
     * arrays as "int[]" etc., class_id 0), most bytes first; rows are freed after the call */
    void (*heap_dump)(void *ctx, const struct hprof_dump_summary *d,
                      const struct hprof_class_row *rows, size_t n);
};

/*
 * Parse the input on fd (a file or a pipe; gzip is detected from the magic bytes).
 * Returns 0 when the input was read to the end (violations or not: see sum->errors),
 * -1 on an I/O or memory error (message in errbuf). sum must be freed with
 * hprof_summary_free() in both cases.
 */
int hprof_parse_fd(int fd, const struct hprof_opts *opts, hprof_report_fn report, void *ctx,
                   struct hprof_summary *sum, char *errbuf, size_t errlen);

void hprof_summary_free(struct hprof_summary *sum);

#endif
