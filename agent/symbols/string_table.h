/* Interned UTF-8 strings (class, method, field, file and thread names). The id of a string
 * is its HPROF string id in the binary output. Thread-safe. */
#ifndef HPROF_STRING_TABLE_H
#define HPROF_STRING_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

int string_table_init(void);

/* Returns the id of s (>= 1), adding it if new; 0 only when memory ran out. NULL -> 0. */
hprof_id string_table_intern(const char *s);

/* The text of an id (stable for the life of the process); NULL for 0 or unknown ids. */
const char *string_table_text(hprof_id id);

/* Frees the table (no thread may use it any more): a failed start leaves nothing behind. */
void string_table_teardown(void);

#endif
