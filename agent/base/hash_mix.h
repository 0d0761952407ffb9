/* One 64-bit finalizer for the agent's hash tables: keys such as object addresses, frame
 * serials and packed ids differ in a few middle bits, and a power-of-two table takes the
 * low bits, so every input bit must reach every output bit. */
#ifndef HPROF_HASH_MIX_H
#define HPROF_HASH_MIX_H

#include <stdint.h>

static inline uint64_t hash_mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

#endif
