/* A bounded lock-free ring of fixed-size records with many producers and one consumer, for
 * cpu=samples' signal handler: producers are signal handlers (no malloc, no locks: a claim is
 * one compare-and-swap), the consumer is the agent thread that drains it. Each cell carries a
 * sequence number that says whether it is free for the producer of a given position or
 * published for the consumer (the classic bounded-queue scheme with per-cell sequences).
 * A producer interrupted between its claim and its publish holds the consumer back at that
 * cell until it publishes; nothing is lost. A full ring refuses the claim (the caller counts
 * the loss). Pure C; the memory is allocated once, before any producer runs. */
#ifndef HPROF_SAMPLE_RING_H
#define HPROF_SAMPLE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sample_ring;

/* capacity: records, rounded up to a power of two (>= 2); record_size: bytes of each record.
 * NULL when out of memory. */
struct sample_ring *sample_ring_new(size_t capacity, size_t record_size);
void sample_ring_free(struct sample_ring *r);
size_t sample_ring_capacity(const struct sample_ring *r);
size_t sample_ring_record_size(const struct sample_ring *r);

/* Producer (async-signal-safe): a record to fill at *pos, or NULL when the ring is full.
 * Every successful claim must be followed by sample_ring_publish(pos). */
void *sample_ring_claim(struct sample_ring *r, uint64_t *pos);
void sample_ring_publish(struct sample_ring *r, uint64_t pos);

/* Consumer (one thread at a time): the oldest published record, or NULL when the next one is
 * not published yet; sample_ring_release frees it for producers. */
void *sample_ring_peek(struct sample_ring *r);
void sample_ring_release(struct sample_ring *r);

/* Positions claimed so far (the next producer's position) and consumed so far. A record
 * claimed before claimed() returned x has a position below x; it has been consumed once
 * consumed() > its position. */
uint64_t sample_ring_claimed(struct sample_ring *r);
uint64_t sample_ring_consumed(struct sample_ring *r);

#endif
