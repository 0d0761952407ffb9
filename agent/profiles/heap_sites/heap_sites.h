/* heap=sites: allocation sites (class, stack trace) with allocated and live objects and bytes,
 * written as SITES (ascii) or ALLOC SITES and HEAP SUMMARY (binary). doc/heap-sites.md. */
#ifndef HPROF_HEAP_SITES_H
#define HPROF_HEAP_SITES_H

#include <stdint.h>

#include "profile.h"

extern const struct hprof_profile heap_sites_profile;

/* For heap dumps: the allocation trace serial of an object with this tag (in the agent's main
 * JVMTI environment) whose class has this serial. A tag naming a site gives that site's trace;
 * an untagged object (tag 0) of a class with a default site gives the default site's trace;
 * anything else HPROF_TRACE_SERIAL_NONE. No JVMTI calls and no locks: safe in heap-walk
 * callbacks. The trace is not written yet: the emitter writes it (emit_trace). */
uint32_t heap_sites_trace_of(uint64_t tag, uint32_t class_serial);

#endif
