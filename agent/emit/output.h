/* The one output of a run: a file or a socket, with the writer of the chosen format. All
 * writing goes through output_lock()/output_unlock(), which serialise writers from event
 * callbacks, the dump code and agent threads. */
#ifndef HPROF_OUTPUT_H
#define HPROF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "writer.h"

/* Opens file= (or the default name) or connects to net=host:port, and writes the header.
 * Returns 0, or -1 with a one-line message in err. */
int output_open(const struct hprof_options *opts, char *err, size_t errlen);

/* Takes the output lock and returns the writer, or NULL when there is no usable output
 * (closed, or a write failed). Always pair with output_unlock(), even after NULL. */
struct hprof_writer *output_lock(void);
void output_unlock(void);

/* The socket's descriptor for reading commands (net=), or -1. */
int output_socket_fd(void);

/* Where the output goes, for messages: a path or "host:port". */
const char *output_name(void);

/* Flushes and closes; later output_lock() calls return NULL. */
void output_close(void);

#endif
