/* cpu=samples' producer interface: the one ring of sample records that every sampling engine
 * fills and the profile (cpu_profile.h) drains. A producer claims a record, fills it and
 * publishes it; all three are async-signal-safe (no lock, no malloc: the ring is allocated
 * once, before any producer runs), so a signal handler can produce. Today the producers are
 * the CPU-time timers' SIGPROF handler (cpu_timers.h) and the late walker (late_walk.h), which
 * completes a record the handler handed over; a new engine (whole-process or wall-clock
 * sampling) produces records the same way and gives the profile its sample_source
 * (cpu_profile.h). doc/architecture.md walks the path of one record. */
#ifndef HPROF_SAMPLE_RECORDS_H
#define HPROF_SAMPLE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agct_stack.h"

/* One record: who was interrupted, and the Java stack found. */
struct sample_record {
    uint32_t slot;        /* the producer's slot for the thread (cpu_timers.h) */
    uint32_t epoch;       /* the slot's epoch at the sample (switches and clears bump it) */
    uint32_t weight;      /* intervals of CPU time this sample stands for: 1 + overruns */
    int32_t nframes;      /* AGCT's count: frames, 0 = no Java frame, < 0: enum async_ticks */
    uintptr_t owner;      /* the thread's owner word (the profile's thread entry) */
    uintptr_t vthread;    /* the virtual thread last mounted on it (JDK 21+, thread=y), or 0 */
    uint32_t mounted;     /* a virtual thread was mounted at the sample */
    uint32_t walked_late; /* frames from GetStackTrace after the signal (late_walk.h) */
    uintptr_t pc;         /* the interrupted program counter (0: none; claim clears it): the
                             drain names native code on top of the Java frames (native_frames.h) */
    struct async_frame frames[]; /* up to sample_records_max_frames() */
};

/* Allocates the ring for records of up to max_frames frames (before any producer runs).
 * False: out of memory. */
bool sample_records_init(int max_frames);
/* Frees the ring (a set-up that failed after init; no producer may run any more). */
void sample_records_free(void);
int sample_records_max_frames(void);
/* The depth producers walk (clamped to [1, max_frames]); the drain sets it from depth=. */
void sample_records_set_depth(int depth);
int sample_records_depth(void);

/* Producer side (async-signal-safe). A record to fill at *pos, or NULL when the ring is full
 * (the producer counts the loss). Every claim is followed by sample_records_publish(pos). */
struct sample_record *sample_records_claim(uint64_t *pos);
void sample_records_publish(uint64_t pos);

/* Consumer side (one thread at a time, cpu_profile.c's drain). */
const struct sample_record *sample_records_peek(void);
void sample_records_release(void);
size_t sample_records_capacity(void);

/* Positions claimed and consumed so far (sample_ring.h): a record claimed before claimed()
 * returned x has been consumed once consumed() > its position. */
uint64_t sample_records_claimed(void);
uint64_t sample_records_consumed(void);

#endif
