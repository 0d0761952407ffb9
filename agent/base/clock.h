/* The agent's clocks, in nanoseconds: one helper instead of a copy per module. Inline, since
 * the cpu=times tracker and the heap=sites hot path read them on every event. */
#ifndef HPROF_CLOCK_H
#define HPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* clock_gettime(id) in nanoseconds; 0 when the clock cannot be read. */
static inline uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Monotonic time, for intervals and deadlines. */
static inline uint64_t clock_monotonic_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* Monotonic time at the kernel's tick resolution (a few ms), for cheap guards on hot paths. */
static inline uint64_t clock_coarse_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC_COARSE);
}

/* A nanosecond count (such as a monotonic deadline) as a timespec, for the timed waits that
 * take an absolute time on CLOCK_MONOTONIC. */
static inline struct timespec clock_timespec_of(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    return ts;
}
/* CPU time of the calling thread; 0 when this system cannot tell. */
static inline uint64_t clock_thread_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

#endif
