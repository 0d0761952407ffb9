/* phd-read's checker of OpenJ9 classic (text) heap dumps: phd-read hands it any file that
 * starts with "// Version: ". */
#ifndef HPROF_CLASSIC_READ_H
#define HPROF_CLASSIC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Checks data[0..len) strictly against the rendering the OpenJ9 VM writes (doc/tools.md) and
 * prints a summary (JSON with json, none with quiet). Returns the exit status: 0 valid, 1
 * violations, 2 out of memory. */
int classic_read(const char *path, const uint8_t *data, size_t len, bool json, bool quiet,
                 uint64_t allow_dangling, uint64_t max_reports);

#endif
