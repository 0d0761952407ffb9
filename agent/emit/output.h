/* The one output of a run: a file or a socket, with the writer of the chosen format. All
 * writing goes through output_lock()/output_unlock(), which serialise writers from event
 * callbacks, the dump code and agent threads. */
#ifndef HPROF_OUTPUT_H
#define HPROF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "hprof_error.h"
#include "options.h"
#include "writer.h"

/* Opens file= (or the default name) or connects to net=host:port, and writes the header.
 * Returns hprof_ok() or the error (the caller logs it: the VM does not start). */
struct hprof_error output_open(const struct hprof_options *opts);

/* Takes the output lock and returns the writer, or NULL when there is no usable output
 * (closed, or a write failed). Always pair with output_unlock(), even after NULL. */
struct hprof_writer *output_lock(void);
void output_unlock(void);

/* The socket's descriptor for reading commands (net=), or -1. */
int output_socket_fd(void);

/* Where the output goes, for messages: a path or "host:port". */
const char *output_name(void);

/* net=: waits until everything written so far has left the send spool for the socket, at
 * most timeout_ms; false (with the bytes left in *left) when the time ran out. Always true
 * for a file. Takes no lock: call it without holding the output lock. */
bool output_wait_sent(int timeout_ms, uint64_t *left);

/* net=: fn gets, at close, what the peer sent that nobody read (then (NULL, 0)). */
void output_on_unread_input(sink_input_fn fn, void *ctx);

/* Flushes and closes; later output_lock() calls return NULL. */
void output_close(void);

#endif
