/* heap=sites: allocation sites (class, stack trace) with allocated and live objects and bytes,
 * written as SITES (ascii) or ALLOC SITES and HEAP SUMMARY (binary). doc/heap-sites.md. */
#ifndef HPROF_ALLOC_SITES_H
#define HPROF_ALLOC_SITES_H

#include "profile.h"

extern const struct hprof_profile sites_profile;

#endif
