/* A heap dump the ascii writer holds back until heap_dump_end brings its totals, which ascii
 * prints first ("HEAP DUMP BEGIN (N objects, M bytes)"): the text of its roots and objects goes
 * to a temporary file, the text of its CLASS DUMPs to memory (they are written first, as HPROF
 * orders a dump). The file ($TMPDIR, else /tmp) is gone from its directory from the start, so
 * nothing is left behind. Internal to the ascii writer. */
#ifndef HPROF_ASCII_DUMP_SPOOL_H
#define HPROF_ASCII_DUMP_SPOOL_H

#include <stdbool.h>

#include "hprof_error.h"
#include "sink.h"

struct ascii_dump_spool;

struct hprof_error ascii_dump_spool_open(struct ascii_dump_spool **out);
/* Where the text of roots and objects goes, and where the text of CLASS DUMPs goes. */
struct hprof_sink *ascii_dump_spool_records(struct ascii_dump_spool *sp);
struct hprof_sink *ascii_dump_spool_classes(struct ascii_dump_spool *sp);
/* True once writing the temporary file failed (disk full): the dump is lost. */
bool ascii_dump_spool_failed(const struct ascii_dump_spool *sp);
/* Writes the classes' text, then the records' text, to out. A failure to read the file back
 * returns its reason (what was read is written). */
struct hprof_error ascii_dump_spool_copy(struct ascii_dump_spool *sp, struct hprof_sink *out);
void ascii_dump_spool_close(struct ascii_dump_spool *sp);

#endif
