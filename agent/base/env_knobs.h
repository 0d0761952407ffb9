/* The environment variables the agent reads, all here: diagnostics and test switches, not
 * options (doc/options.md, "Environment variables", lists them). Read once, on first use (at
 * start-up, before any agent thread runs). */
#ifndef HPROF_ENV_KNOBS_H
#define HPROF_ENV_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

struct env_knobs {
    bool sites_stats;            /* HPROF_SITES_STATS=1: heap=sites prints its counters */
    bool sites_agct_check;       /* HPROF_SITES_AGCT_CHECK=1: AGCT compared on each event */
    bool cpu_clock_monotonic;    /* HPROF_CPU_CLOCK=monotonic: cpu=times never uses the TSC */
    const char *cpu_times_probe; /* HPROF_CPU_TIMES_PROBE=<probe>, or NULL */
    bool has_progress_ms;        /* HPROF_PROGRESS_MS=<ms> is set: */
    uint64_t progress_ms;        /*   heap dump progress interval */
    bool heap_walk_tags;         /* HPROF_HEAP_WALK=tags: heap dumps tag every object */
    const char *tmpdir;          /* TMPDIR, else "/tmp": heap dump spool files */
};

const struct env_knobs *env_knobs(void);

#endif
