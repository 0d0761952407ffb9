#include "env_knobs.h"

#include <stdlib.h>
#include <string.h>

static struct env_knobs knobs;
static bool read_already;

/* Set and not "0". */
static bool flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static const char *text(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

const struct env_knobs *env_knobs(void)
{
    if (read_already)
        return &knobs;
    knobs.sites_stats = flag("HPROF_SITES_STATS");
    knobs.sites_agct_check = flag("HPROF_SITES_AGCT_CHECK");
    const char *clock = text("HPROF_CPU_CLOCK");
    knobs.cpu_clock_monotonic = clock && strcmp(clock, "monotonic") == 0;
    knobs.cpu_times_probe = text("HPROF_CPU_TIMES_PROBE");
    const char *ms = text("HPROF_PROGRESS_MS");
    knobs.has_progress_ms = ms != NULL;
    knobs.progress_ms = ms ? strtoull(ms, NULL, 10) : 0;
    const char *walk = text("HPROF_HEAP_WALK");
    knobs.heap_walk_tags = walk && strcmp(walk, "tags") == 0;
    knobs.tmpdir = text("TMPDIR");
    if (!knobs.tmpdir)
        knobs.tmpdir = "/tmp";
    read_already = true;
    return &knobs;
}
