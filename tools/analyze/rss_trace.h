/*
 * rss_trace: the process's resident memory after each phase of the analysis, on stderr, when
 * the environment variable HPROF_ANALYZE_RSS is set (doc/heap-analysis.md, "Memory"). For
 * finding which phase sets the peak; silent otherwise.
 */
#ifndef RSS_TRACE_H
#define RSS_TRACE_H

/* One line "rss: PHASE: VmRSS N MiB, VmHWM N MiB" if HPROF_ANALYZE_RSS is set. */
void rss_trace(const char *phase);

#endif
