/* Helpers shared by the writers (not part of the agent-facing interface). */
#ifndef HPROF_WRITER_INTERNAL_H
#define HPROF_WRITER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Formats a time (microseconds since the epoch) in local time the way ctime(3) does, without
 * the newline and always with English names: "Sat Nov 21 04:53:34 2026", "Fri Feb  6 ...".
 * buf needs WRITER_DATE_LEN bytes. Returns buf. */
#define WRITER_DATE_LEN 32
char *writer_format_date(uint64_t epoch_us, char *buf);

#endif
