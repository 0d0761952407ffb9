/* rss_trace.c: see rss_trace.h. */
#include "rss_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a "Vm...:   N kB" line of /proc/self/status, in MiB; -1 when absent */
static long status_mib(const char *status, const char *key)
{
    const char *p = strstr(status, key);
    return p ? strtol(p + strlen(key), NULL, 10) / 1024 : -1;
}

void rss_trace(const char *phase)
{
    if (!getenv("HPROF_ANALYZE_RSS"))
        return;
    char buf[4096];
    FILE *f = fopen("/proc/self/status", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    fprintf(stderr, "rss: %s: VmRSS %ld MiB, VmHWM %ld MiB\n", phase, status_mib(buf, "VmRSS:"),
            status_mib(buf, "VmHWM:"));
}
