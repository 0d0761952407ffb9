/* The ring of sample records (sample_records.h): a sample_ring of records sized for the
 * deepest stack, and the depth producers walk. */
#include "sample_records.h"

#include <stdatomic.h>

#include "sample_ring.h"

/* The ring holds this many bytes of records at most (and at least MIN_RECORDS records). */
#define RING_BYTES ((size_t)4 << 20)
#define MIN_RECORDS 256u
#define MAX_RECORDS 16384u

static struct sample_ring *ring;
static int max_frames;
static _Atomic(int) walk_depth;

bool sample_records_init(int frames)
{
    max_frames = frames > 0 ? frames : 1;
    atomic_store(&walk_depth, max_frames);
    size_t record = sizeof(struct sample_record) + (size_t)max_frames * sizeof(struct async_frame);
    size_t n = RING_BYTES / record;
    n = n < MIN_RECORDS ? MIN_RECORDS : n > MAX_RECORDS ? MAX_RECORDS : n;
    ring = sample_ring_new(n, record);
    return ring != NULL;
}

void sample_records_free(void)
{
    sample_ring_free(ring);
    ring = NULL;
}

int sample_records_max_frames(void)
{
    return max_frames;
}

void sample_records_set_depth(int depth)
{
    if (depth < 1)
        depth = 1;
    atomic_store_explicit(&walk_depth, depth < max_frames ? depth : max_frames,
                          memory_order_relaxed);
}

int sample_records_depth(void)
{
    return atomic_load_explicit(&walk_depth, memory_order_relaxed);
}

struct sample_record *sample_records_claim(uint64_t *pos)
{
    struct sample_record *rec = sample_ring_claim(ring, pos);
    if (rec)
        rec->pc = 0; /* producers that know no native pc leave it so */
    return rec;
}

void sample_records_publish(uint64_t pos)
{
    sample_ring_publish(ring, pos);
}

const struct sample_record *sample_records_peek(void)
{
    return sample_ring_peek(ring);
}

void sample_records_release(void)
{
    sample_ring_release(ring);
}

size_t sample_records_capacity(void)
{
    return sample_ring_capacity(ring);
}

uint64_t sample_records_claimed(void)
{
    return sample_ring_claimed(ring);
}

uint64_t sample_records_consumed(void)
{
    return sample_ring_consumed(ring);
}
