/* Helpers shared by the writers (not part of the agent-facing interface). */
#ifndef HPROF_WRITER_INTERNAL_H
#define HPROF_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Formats a time (microseconds since the epoch) in local time the way ctime(3) does, without
 * the newline and always with English names: "Sat Nov 21 04:53:34 2026", "Fri Feb  6 ...".
 * buf needs WRITER_DATE_LEN bytes. Returns buf. */
#define WRITER_DATE_LEN 32
char *writer_common_format_date(uint64_t epoch_us, char *buf);

/* OpenJ9 formats (PHD, classic). The address of an id: untagged objects (bit 63 | address)
 * keep their address; class ids go to 2^61 + 8 * serial; other tags to 2^60 + 8 * tag. All
 * below 2^62, 8-byte aligned, unique for tags below 2^57 (*warned: one stderr note for a
 * bigger one). */
#include "writer.h"
uint64_t openj9_common_address(hprof_id id, bool *warned);
/* Java source class name -> the VM's ("java/lang/String", "[I", "[[Ljava/lang/String;"),
 * NUL-terminated in out; returns its length (at most cap - 1). */
size_t openj9_common_class_name(const char *src, char *out, size_t cap);

/* pthread_create for the sink's own threads (background writers, the socket sender): the
 * new thread starts with every asynchronous signal blocked, so signals stay with the
 * process's own threads. Returns pthread_create's result. */
#include <pthread.h>
int writer_common_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);

/* A temporary file for reading and writing in dir (NULL: $TMPDIR, else /tmp), gone from the
 * directory already (O_TMPFILE, or named prefix-XXXXXX and unlinked at once). Returns the
 * descriptor, or -errno. */
int writer_common_temp_file(const char *dir, const char *prefix);

#endif
