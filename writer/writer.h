/* The one interface every output format implements (hprof ascii, HPROF binary, OpenJ9 PHD
 * and classic). The agent's dump code and heap walker talk only to this table of
 * functions, never to a format directly, so a new format is one new file. Pure C, no JVMTI.
 *
 * Numbering: every serial the agent passes is its internal serial, starting at 1
 * (trace serial 1 is the empty "no trace" trace; 0 is never used). The binary writer writes
 * them unchanged; the ascii writer shows them with the historic bases (thread 200000 + serial,
 * trace 299999 + serial, so the empty trace prints as TRACE 300000).
 * Identifiers (objects, classes, strings, frames) are 64-bit and written as 8-byte IDs.
 *
 * Ordering duties of the caller (the agent): a string before any record naming its id, a
 * LOAD CLASS before frames of that class, frames before the trace listing them, a trace
 * before any record naming its serial. The writer does not reorder. */
#ifndef HPROF_WRITER_H
#define HPROF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink.h"

typedef uint64_t hprof_id;

#define HPROF_TRACE_SERIAL_NONE 1u /* the empty dummy trace */
#define HPROF_ASCII_THREAD_BASE 200000u
#define HPROF_ASCII_TRACE_BASE 299999u

/* Basic types of the binary format (also field and array element types). */
enum hprof_basic_type {
    HPROF_TYPE_OBJECT = 2,
    HPROF_TYPE_BOOLEAN = 4,
    HPROF_TYPE_CHAR = 5,
    HPROF_TYPE_FLOAT = 6,
    HPROF_TYPE_DOUBLE = 7,
    HPROF_TYPE_BYTE = 8,
    HPROF_TYPE_SHORT = 9,
    HPROF_TYPE_INT = 10,
    HPROF_TYPE_LONG = 11,
};

/* Record tags of the binary format (top level). */
enum hprof_tag {
    HPROF_TAG_STRING = 0x01,
    HPROF_TAG_LOAD_CLASS = 0x02,
    HPROF_TAG_UNLOAD_CLASS = 0x03,
    HPROF_TAG_STACK_FRAME = 0x04,
    HPROF_TAG_STACK_TRACE = 0x05,
    HPROF_TAG_ALLOC_SITES = 0x06,
    HPROF_TAG_HEAP_SUMMARY = 0x07,
    HPROF_TAG_START_THREAD = 0x0A,
    HPROF_TAG_END_THREAD = 0x0B,
    HPROF_TAG_CPU_SAMPLES = 0x0D,
    HPROF_TAG_CONTROL_SETTINGS = 0x0E,
    HPROF_TAG_HEAP_DUMP_SEGMENT = 0x1C,
    HPROF_TAG_HEAP_DUMP_END = 0x2C,
};

/* Heap-dump sub-record tags besides the root kinds (enum hprof_root_kind). */
#define HPROF_SUB_CLASS_DUMP 0x20
#define HPROF_SUB_INSTANCE_DUMP 0x21
#define HPROF_SUB_OBJ_ARRAY_DUMP 0x22
#define HPROF_SUB_PRIM_ARRAY_DUMP 0x23

/* Bytes of a top-level record header: u1 tag, u4 time, u4 length. */
#define HPROF_RECORD_HEADER_SIZE 9u
/* Most body bytes of one HEAP DUMP SEGMENT; a single sub-record larger than this gets a
 * segment of its own. */
#define HPROF_SEGMENT_LIMIT (1024u * 1024u)
/* Bytes before the elements of an OBJECT ARRAY DUMP (tag, id, u4 trace, u4 n, class id) and
 * of a PRIMITIVE ARRAY DUMP (tag, id, u4 trace, u4 n, u1 type). */
#define HPROF_OBJ_ARRAY_HEADER_SIZE 25u
#define HPROF_PRIM_ARRAY_HEADER_SIZE 18u

/* The element count an array sub-record is written with: nelems, or, when header_size +
 * nelems * elem_size would not fit a record length (UINT32_MAX: the body of a segment of its
 * own), the largest count that does, as HotSpot's dumper computes it. The binary writer
 * truncates such arrays and says so once on stderr. */
uint32_t binary_heap_dump_array_max_elems(uint32_t nelems, unsigned elem_size,
                                          unsigned header_size);

/* Size in bytes of a value of this type in the binary format (object = id size, 8). */
unsigned writer_common_type_size(enum hprof_basic_type t);
/* Java source name of a primitive type ("int"), or NULL for OBJECT. */
const char *writer_common_type_name(enum hprof_basic_type t);

/* Line number of a frame: > 0 a line, or one of these. */
#define HPROF_LINE_NONE 0 /* no line information available (lineno=n, no table) */
#define HPROF_LINE_UNKNOWN (-1)
#define HPROF_LINE_COMPILED (-2)
#define HPROF_LINE_NATIVE (-3)

struct hprof_frame {
    hprof_id frame_id;
    hprof_id method_name_id, method_sig_id, source_name_id; /* string ids (binary) */
    uint32_t class_serial;
    int32_t line;
    const char *class_name;  /* Java source form: java.lang.String, int[] */
    const char *method_name; /* "main", "<init>" */
    const char *method_sig;  /* "([Ljava/lang/String;)V" */
    const char *source_name; /* "Foo.java", or NULL when unknown */
};

struct hprof_thread_info {
    uint32_t thread_serial;
    hprof_id thread_obj;
    uint32_t trace_serial;
    hprof_id name_id, group_id, parent_group_id; /* string ids (binary); 0 = none */
    const char *name, *group, *parent_group;     /* NULL = none */
};

/* ---- heap=sites ---------------------------------------------------------------------- */

struct hprof_site_row {
    uint32_t class_serial;
    const char *class_name; /* Java source form */
    uint8_t array_type;     /* 0 = not an array, else the basic type of its elements */
    uint32_t trace_serial;
    uint64_t live_bytes, live_objs, alloc_bytes, alloc_objs;
};

#define HPROF_SITES_INCREMENTAL 0x1
#define HPROF_SITES_BY_ALLOC 0x2
#define HPROF_SITES_FORCE_GC 0x4

struct hprof_sites_report {
    uint16_t flags;
    float cutoff;
    uint64_t total_live_bytes, total_live_objs, total_alloc_bytes, total_alloc_objs;
    size_t nrows; /* rows already sorted and cut off by the caller */
    const struct hprof_site_row *rows;
};

struct hprof_heap_summary {
    uint64_t total_live_bytes, total_live_objs, total_alloc_bytes, total_alloc_objs;
};

/* ---- cpu=samples, cpu=times, monitor time: ranked rows ------------------------------- */

struct hprof_cost_row {
    uint32_t trace_serial;
    uint64_t count;     /* samples (cpu=samples), exact calls (cpu=times), contentions */
    uint64_t cost;      /* what the percentages are of: samples, ns (cpu=times), ms */
    const char *method; /* "java.lang.Object.wait" or, for monitors, "java.lang.Object" */
};

struct hprof_cost_report {
    uint64_t total; /* the "(total = N)" figure: samples or milliseconds */
    size_t nrows;   /* sorted by cost, cutoff applied by the caller */
    const struct hprof_cost_row *rows;
    /* What the percentages are of, in the rows' cost unit, when that is finer than total's
     * (cpu=times: rows in ns, total in ms); 0 = total. */
    uint64_t cost_total;
};

/* cpu=old: one row per method, the older layout (documented in doc/). */
struct hprof_method_time_row {
    const char *method; /* "java.lang.String.hashCode" */
    const char *sig;    /* "()I" */
    uint64_t count;     /* exact calls */
    uint64_t self_ms, total_ms;
};

struct hprof_method_time_report {
    uint64_t total_ms;
    size_t nrows;
    const struct hprof_method_time_row *rows;
};

/* ---- monitor=y ----------------------------------------------------------------------- */

enum hprof_thread_status_bits {
    HPROF_TS_RUNNABLE = 0x01,     /* R */
    HPROF_TS_COND_WAIT = 0x02,    /* CW */
    HPROF_TS_MONITOR_WAIT = 0x04, /* MW */
    HPROF_TS_SLEEPING = 0x08,     /* SL */
    HPROF_TS_ZOMBIE = 0x10,       /* ZO */
    HPROF_TS_SUSPENDED = 0x20,    /* S modifier */
    HPROF_TS_INTERRUPTED = 0x40,  /* I modifier */
};

struct hprof_monitor_thread {
    uint32_t thread_serial, trace_serial;
    unsigned status; /* hprof_thread_status_bits */
};

struct hprof_monitor_info {
    const char *class_sig; /* "Ljava/lang/Object;" */
    uint32_t owner_serial; /* 0 = no owner */
    uint32_t entry_count;
    size_t nwaiters, nnotify;
    const uint32_t *waiters; /* thread serials waiting to enter */
    const uint32_t *notify;  /* thread serials waiting to be notified */
};

struct hprof_monitor_dump {
    size_t nthreads, nmonitors;
    const struct hprof_monitor_thread *threads;
    const struct hprof_monitor_info *monitors;
};

/* ---- heap=dump ----------------------------------------------------------------------- */

enum hprof_root_kind {
    HPROF_ROOT_UNKNOWN = 0xFF,
    HPROF_ROOT_JNI_GLOBAL = 0x01,
    HPROF_ROOT_JNI_LOCAL = 0x02,
    HPROF_ROOT_JAVA_FRAME = 0x03,
    HPROF_ROOT_NATIVE_STACK = 0x04,
    HPROF_ROOT_STICKY_CLASS = 0x05,
    HPROF_ROOT_THREAD_BLOCK = 0x06,
    HPROF_ROOT_MONITOR_USED = 0x07,
    HPROF_ROOT_THREAD_OBJECT = 0x08,
};

struct hprof_root {
    enum hprof_root_kind kind;
    hprof_id object;
    uint32_t thread_serial; /* JNI local, Java frame, native stack, thread block, thread obj */
    int32_t frame_depth;    /* JNI local, Java frame: -1 for empty */
    uint32_t trace_serial;  /* thread object; JNI global (ascii only; 0 = the empty trace) */
    hprof_id jni_ref;       /* JNI global: the reference's own id */
    const char *class_name; /* sticky class, for the ascii "name=" */
};

union hprof_value {
    hprof_id obj;
    uint8_t z;
    uint16_t c;
    float f;
    double d;
    int8_t b;
    int16_t s;
    int32_t i;
    int64_t j;
};

struct hprof_field {
    hprof_id name_id;
    const char *name;
    enum hprof_basic_type type;
};

struct hprof_static_field {
    struct hprof_field field;
    union hprof_value value;
};

struct hprof_cp_entry {
    uint16_t index;
    enum hprof_basic_type type;
    union hprof_value value;
};

struct hprof_class_dump {
    hprof_id class_id;
    uint32_t trace_serial;
    hprof_id super_id, loader_id, signers_id, domain_id;
    uint32_t instance_size;      /* bytes of field values in an INSTANCE DUMP */
    uint64_t heap_instance_size; /* shallow heap size of one instance (PHD); 0 = unknown */
    uint64_t class_object_size;  /* shallow size of the java.lang.Class object (classic) */
    const char *name;            /* Java source form */
    size_t ncp, nstatics, nfields;
    const struct hprof_cp_entry *cp;
    const struct hprof_static_field *statics;
    const struct hprof_field *fields; /* this class's own instance fields, in order */
};

/* An instance: its field values for this class, then its super class, and so on up;
 * fields[] describes values[] one to one (the ascii writer prints object fields by name). */
struct hprof_instance_dump {
    hprof_id object_id;
    uint32_t trace_serial;
    hprof_id class_id;
    const char *class_name;
    uint32_t size; /* shallow size in bytes (ascii sz=) */
    size_t nvalues;
    const struct hprof_field *fields;
    const union hprof_value *values;
};

struct hprof_obj_array_dump {
    hprof_id array_id;
    uint32_t trace_serial;
    hprof_id class_id;
    const char *class_name; /* "java.lang.String[]" */
    hprof_id elem_class_id; /* class id of the element class (PHD); 0 = unknown */
    uint32_t size;
    uint32_t nelems; /* the true length; null elements are 0 in elems */
    const hprof_id *elems;
};

struct hprof_prim_array_dump {
    hprof_id array_id;
    uint32_t trace_serial;
    enum hprof_basic_type elem_type;
    uint32_t size;
    uint32_t nelems;
    const void *elems; /* nelems values in host byte order */
};

/* The totals of a heap dump, as ascii's HEAP DUMP BEGIN prints them: objects (instances,
 * arrays and classes) and their shallow sizes in bytes. */
struct hprof_heap_totals {
    uint64_t objects, bytes;
    /* Allocation sites linked (heap=sites with the dump): of the instances and arrays written,
     * how many carry a site's trace and how many the empty one. Class objects are in neither. */
    bool sites;
    uint64_t with_site, without_site;
};

/* ---- the interface ------------------------------------------------------------------- */

struct hprof_writer;

/* A format leaves out (NULL) the operations it has no place for; writer_common_init puts one that
 * writes nothing (flush: flushes the sink) in their place, so callers call any operation.
 * Only close is required. */
struct hprof_writer_ops {
    const char *name; /* "ascii", "binary" */
    /* Header, time-stamped with the writer's clock. */
    void (*begin)(struct hprof_writer *w);
    void (*string)(struct hprof_writer *w, hprof_id id, const char *utf8, size_t len);
    void (*load_class)(struct hprof_writer *w, uint32_t class_serial, hprof_id class_id,
                       uint32_t trace_serial, hprof_id name_id, const char *name);
    void (*unload_class)(struct hprof_writer *w, uint32_t class_serial);
    void (*frame)(struct hprof_writer *w, const struct hprof_frame *f);
    /* frames[] are the trace's frames, already written with frame(), top first. */
    void (*trace)(struct hprof_writer *w, uint32_t trace_serial, uint32_t thread_serial,
                  size_t nframes, const struct hprof_frame *frames);
    void (*thread_start)(struct hprof_writer *w, const struct hprof_thread_info *t);
    void (*thread_end)(struct hprof_writer *w, uint32_t thread_serial);
    void (*control_settings)(struct hprof_writer *w, bool alloc_traces, bool cpu_sampling,
                             uint16_t depth);
    void (*sites)(struct hprof_writer *w, const struct hprof_sites_report *r);
    void (*heap_summary)(struct hprof_writer *w, const struct hprof_heap_summary *s);
    void (*cpu_samples)(struct hprof_writer *w, const struct hprof_cost_report *r);
    void (*cpu_times)(struct hprof_writer *w, const struct hprof_cost_report *r);
    void (*cpu_old)(struct hprof_writer *w, const struct hprof_method_time_report *r);
    void (*monitor_time)(struct hprof_writer *w, const struct hprof_cost_report *r);
    void (*monitor_wait)(struct hprof_writer *w, const char *class_sig, int64_t timeout_ms,
                         uint32_t thread_serial);
    void (*monitor_waited)(struct hprof_writer *w, const char *class_sig, int64_t waited_ms,
                           uint32_t thread_serial);
    void (*monitor_dump)(struct hprof_writer *w, const struct hprof_monitor_dump *d);
    /* Heap dump: begin, records, end. totals: the dump's true totals when the caller knows
     * them before the records; NULL when it learns them only while writing the records (the
     * heap walk streams them): heap_dump_end then brings them. Only ascii prints totals; it
     * prints them first, so after a begin without totals it holds the dump back until
     * heap_dump_end (and writes its CLASS DUMPs first, as HPROF orders a dump: classes, roots,
     * objects); heap_dump_end(w, NULL) there means the dump was abandoned and drops it.
     * Between begin and end call only root, class_dump, instance_dump, obj_array_dump,
     * prim_array_dump, flush and close: the binary writer drops any other record there (and
     * dump records outside a dump), saying so once on stderr. close inside a dump ends it. */
    void (*heap_dump_begin)(struct hprof_writer *w, const struct hprof_heap_totals *totals);
    void (*root)(struct hprof_writer *w, const struct hprof_root *r);
    void (*class_dump)(struct hprof_writer *w, const struct hprof_class_dump *c);
    void (*instance_dump)(struct hprof_writer *w, const struct hprof_instance_dump *o);
    void (*obj_array_dump)(struct hprof_writer *w, const struct hprof_obj_array_dump *a);
    void (*prim_array_dump)(struct hprof_writer *w, const struct hprof_prim_array_dump *a);
    void (*heap_dump_end)(struct hprof_writer *w, const struct hprof_heap_totals *totals);
    /* Pushes everything written so far to the sink's descriptor. With gzip every flush ends
     * a gzip member: flush after a dump or a batch of records, not after each record. */
    void (*flush)(struct hprof_writer *w);
    /* Closes the sink and frees the writer. */
    void (*close)(struct hprof_writer *w);
};

/* Common part of every writer; formats embed it first. */
struct hprof_writer {
    const struct hprof_writer_ops *ops; /* the format's, completed: no NULL operation */
    struct hprof_writer_ops completed_ops;
    struct hprof_sink *sink; /* where records go: the output, or the spool of a format holding a
                              * heap dump back (ascii); writer_common_failed() asks it */
    uint64_t start_us;       /* header time stamp */
    /* Clock for record time stamps and ascii dates: microseconds since the epoch.
     * Replaceable in tests (set it before begin). */
    uint64_t (*clock_us)(void);
};

/* Writers own the sink they are given. */
struct hprof_writer *ascii_writer_new(struct hprof_sink *sink);
struct hprof_writer *binary_writer_new(struct hprof_sink *sink);
/* OpenJ9 portable heap dump: one heap dump, nothing else (doc/phd.md). */
struct hprof_writer *phd_writer_new(struct hprof_sink *sink);
/* OpenJ9 classic (text) heap dump: one heap dump, nothing else (doc/phd.md). */
struct hprof_writer *classic_writer_new(struct hprof_sink *sink);

/* The wall clock used by default, microseconds since the epoch. */
uint64_t writer_common_wall_clock_us(void);

/* The common part, for a format's constructor: ops completed (see hprof_writer_ops), the sink
 * it owns from now on, the wall clock. */
void writer_common_init(struct hprof_writer *w, const struct hprof_writer_ops *ops,
                        struct hprof_sink *sink);

/* Whether a write to the output failed (disk full, the peer gone): records are lost from then
 * on. For the agent, which talks to the writer, never to its sink. */
bool writer_common_failed(const struct hprof_writer *w);
/* A large output follows, or is over (a heap dump): the sink may compress and write it in
 * background threads meanwhile (sink_set_bulk). */
void writer_common_set_bulk(struct hprof_writer *w, bool on);

#endif
