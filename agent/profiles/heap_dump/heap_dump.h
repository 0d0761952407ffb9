/* heap=dump (and heap=all): a complete heap dump at each dump request that asks for
 * DUMP_HEAP (exit with doe=y, SIGQUIT, a socket command), written through the writer:
 * STRING and LOAD CLASS records for every class and field name, a STACK TRACE per thread,
 * then one HEAP DUMP (segments closed by HEAP DUMP END in binary) with the roots, every
 * reachable object and a CLASS DUMP for every loaded class. doc/heap-dump.md. */
#ifndef HPROF_HEAP_DUMP_H
#define HPROF_HEAP_DUMP_H

#include "profile.h"

extern const struct hprof_profile heap_dump_profile;

#endif
