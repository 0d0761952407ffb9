/* Option string -> struct hprof_options. Pure C, no JVMTI: built and tested without a JVM.
 *
 * The option string is what follows "hprof=" in -agentlib:hprof=..., -agentpath:lib=...,
 * -Xrunhprof:... or the argument of `jcmd <pid> JVMTI.agent_load <lib> <options>`.
 * Syntax: "[help]|[<option>=<value>, ...]" as in the original manual. */
#ifndef HPROF_OPTIONS_H
#define HPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hprof_error.h"

/* Allowed ranges of the numeric options (doc/options.md). Agent code may size buffers by
 * HPROF_DEPTH_MAX. */
#define HPROF_DEPTH_MAX 1024
#define HPROF_INTERVAL_MAX_MS 1000000 /* 1000 s */
#define HPROF_MEMORY_MAX_MB 1048576   /* memory=: 1 TiB */
#define HPROF_MEMORY_DEFAULT_MB 256
#define HPROF_SITES_INTERVAL_MAX (UINT64_C(1) << 30) /* 1 GiB */
#define HPROF_NET_PORT_MAX 65535

enum hprof_cpu_mode { HPROF_CPU_OFF = 0, HPROF_CPU_SAMPLES, HPROF_CPU_TIMES, HPROF_CPU_OLD };
/* cpu=samples' sampler: signals on per-thread CPU-time timers with AsyncGetCallTrace (the
 * default), or the agent thread's rounds with GetThreadListStackTraces (doc/cpu-samples.md). */
enum hprof_sampler { HPROF_SAMPLER_ASYNC = 0, HPROF_SAMPLER_SAFEPOINT };
/* wall=y: the states a wall sample can record (doc/wall-samples.md), in the order of
 * options_wall_state_name; wall_states= keeps a subset (bit 1 << state). */
enum hprof_wall_state {
    HPROF_WALL_RUNNING = 0, /* RUNNABLE and on the CPU for most of the interval */
    HPROF_WALL_RUNNABLE,    /* RUNNABLE in Java or the VM, mostly off the CPU */
    HPROF_WALL_BLOCKED,     /* waiting to enter a monitor */
    HPROF_WALL_WAITING,     /* Object.wait, join, other waits */
    HPROF_WALL_PARKED,      /* LockSupport.park */
    HPROF_WALL_SLEEPING,    /* Thread.sleep */
    HPROF_WALL_NATIVE,      /* in a native method, mostly off the CPU: I/O, a system call */
    HPROF_WALL_NSTATES
};
#define HPROF_WALL_ALL_STATES ((1u << HPROF_WALL_NSTATES) - 1)
#define HPROF_WALL_DEFAULT_INTERVAL_MS 20
#define HPROF_WALL_NAMES_MAX 256

/* PHD and classic hold only a heap dump (OpenJ9's formats, doc/phd.md). */
enum hprof_format {
    HPROF_FORMAT_ASCII = 0,
    HPROF_FORMAT_BINARY,
    HPROF_FORMAT_PHD,
    HPROF_FORMAT_CLASSIC
};

struct hprof_options {
    bool help;                /* "help": print the option table, exit 0 */
    bool heap_sites;          /* heap=sites or heap=all */
    bool heap_dump;           /* heap=dump or heap=all */
    bool heap_given;          /* heap= appeared in the string */
    enum hprof_cpu_mode cpu;  /* cpu=samples|times|old, default off */
    bool monitor;             /* monitor=y|n, default n */
    enum hprof_format format; /* format=a|b|phd|classic, default a */
    char *file;               /* file=<file>; NULL means the default name */
    char *net_host;           /* net=<host>:<port>; NULL means no socket */
    uint16_t net_port;
    int depth;                  /* depth=<size>, default 4 */
    int interval_ms;            /* interval=<ms>, default 10 */
    double cutoff;              /* cutoff=<value>, default 0.0001 */
    bool lineno;                /* lineno=y|n, default y */
    bool thread;                /* thread=y|n, default n */
    bool doe;                   /* doe=y|n, default y */
    bool msa;                   /* msa=y|n: accepted, no effect on Linux */
    bool force;                 /* force=y|n, default y */
    bool verbose;               /* verbose=y|n, default y */
    bool gzip;                  /* gz=y|n: extension, gzip members for binary output */
    enum hprof_sampler sampler; /* sampler=async|safepoint: extension, default async */
    bool vm_threads;            /* vmthreads=y|n: extension, cpu=samples sees GC/JIT/VM/native
                                   threads too, default y */
    uint64_t sites_interval;    /* sites_interval=<bytes>: extension, 0 = exact sites */
    int memory_mb;              /* memory=<MB>: extension, the tables' budget, 0 = none */
    bool wall;                  /* wall=y|n: extension, wall-clock sampling */
    int wall_interval_ms;       /* wall_interval=<ms>, default 20 */
    unsigned wall_states;       /* wall_states=<s>+<s>...: bits of hprof_wall_state kept */
    char *wall_names;           /* wall_names=<glob>: threads kept by name; NULL = all */
    char warnings[512];         /* non-fatal notes (gc_okay, msa), one per line */
                                /* (each line ends with '\n'; "" when none) */
};

/* Parses str (NULL or "" means all defaults) into *out, which it first resets to the
 * defaults. Returns hprof_ok(), or an error (hprof_error.h) of one line naming the option and
 * what is allowed: "heap option value must be dump|sites|all (heap=foo)"; the caller logs it
 * (as "HPROF ERROR: ..."). Help asked for is success with out->help set: the caller prints
 * options_help_text(). The caller owns the strings in *out and releases them with
 * options_free. Also: *out is overwritten without freeing (call options_free first to reuse
 * one). On an error and on help nothing stays allocated (*out holds the defaults; help=true
 * for help). "help" anywhere in the list wins over errors elsewhere in it. A value given
 * twice: the last one wins. Items are separated by single commas, one trailing comma is
 * tolerated. */
struct hprof_error options_parse(const char *str, struct hprof_options *out);

/* "running", "runnable", "blocked", "waiting", "parked", "sleeping", "native"; NULL when out
 * of range. */
const char *options_wall_state_name(unsigned state);
/* "blocked+waiting+native" -> *mask (bits 1 << state). False on an unknown or empty name. */
bool options_parse_wall_states(const char *v, unsigned *mask);

/* Releases strings allocated by options_parse; *opts is left with defaults. */
void options_free(struct hprof_options *opts);

/* Sets *opts to the manual's defaults (heap=all when no profile is named at all is decided
 * by options_parse, not here). */
void options_defaults(struct hprof_options *opts);

/* The option table printed for "help" (ends with a newline). */
const char *options_help_text(void);

/* The name of the output file: file= if given, else java.hprof.txt (ascii), java.hprof
 * (binary), java.phd (phd) or java.classic.txt (classic). With force=n and an existing
 * file, a new name "<name>.<pid>[.txt]" (and then "<name>.<pid>.<k>[.txt]") is chosen so
 * nothing is overwritten. exists(path) tells whether a path exists (a parameter so tests
 * need no file system). Writes into buf; returns 0, or -1 if buf is too small.
 * Also: the kept last suffix is ".txt" for ascii and classic names ending in ".txt", ".phd"
 * for phd names ending in ".phd" and ".gz" for gz=y names ending in ".gz"; k stops at
 * HPROF_OUTPUT_MAX_K (then -1). exists may be NULL (nothing exists). */
#define HPROF_OUTPUT_MAX_K 100000
int options_output_path(const struct hprof_options *opts, long pid, bool (*exists)(const char *),
                        char *buf, size_t buflen);

#endif
