/* Object tags. A tag is the object's HPROF identifier as well, so every module that tags
 * objects follows one layout, and heap=sites and heap=dump can share tags:
 *   bits 63..40  site field: 0 = no site; TAG_SITE_CLASS marks a java.lang.Class object;
 *                any other value is a heap=sites site index
 *   bits 39..0   serial: unique among tags with the same site field (for class objects,
 *                the class serial)
 * Tags are never 0 (0 means untagged to JVMTI).
 *
 * Site fields from TAG_SITE_ADDRESS_MIN up to (not including) TAG_SITE_CLASS are never tags:
 * a heap dump names objects it did not tag by their address with bit 63 set (heap_walk.h),
 * and those ids land there. heap=sites site indexes stay below TAG_SITE_ADDRESS_MIN. */
#ifndef HPROF_TAGS_H
#define HPROF_TAGS_H

#include <stdint.h>

#define TAG_SERIAL_BITS 40
#define TAG_SERIAL_MASK ((1ull << TAG_SERIAL_BITS) - 1)
#define TAG_SITE_CLASS 0xFFFFFFull
#define TAG_SITE_ADDRESS_MIN 0x800000ull

/* The id of an untagged object at a (user-space) address, disjoint from every tag. */
static inline uint64_t tag_address_id(uint64_t address)
{
    return address | (1ull << 63);
}

static inline uint64_t tag_make(uint64_t site, uint64_t serial)
{
    return (site << TAG_SERIAL_BITS) | (serial & TAG_SERIAL_MASK);
}
static inline uint64_t tag_site(uint64_t tag)
{
    return tag >> TAG_SERIAL_BITS;
}
static inline uint64_t tag_serial(uint64_t tag)
{
    return tag & TAG_SERIAL_MASK;
}

/* A fresh serial for an object tag with site field 0 or a heap=sites site (never 0). */
uint64_t tags_next_serial(void);

/* n fresh consecutive serials (n >= 1); returns the first. A thread that tags many objects
 * takes a block at a time instead of touching the shared counter for each one. */
uint64_t tags_reserve_serials(uint64_t n);

#endif
