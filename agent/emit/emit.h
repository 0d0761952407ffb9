/* The emitter: the one module that takes the output lock and writes what a section refers to
 * (strings, LOAD CLASS, STACK FRAME, STACK TRACE, THREAD START) before the section, each once.
 * The symbol tables (agent/symbols/) only intern and look up; which of their entries are in the
 * output already is known here alone. A profile writes a section as
 *
 *     struct emit_refs refs = {nrows, sizeof *rows, &rows->trace_serial, NULL, NULL};
 *     emit_section(&refs, write_rows, &report);
 *
 * where write_rows(w, ctx) writes the section's records with w. emit_section takes the output
 * lock, writes what the rows name, calls the body and always releases the lock: a section
 * cannot be left open. The emit_* writers below need the lock held (w given to a body). */
#ifndef HPROF_EMIT_H
#define HPROF_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "writer.h"

/* Takes the output lock and returns the writer, or NULL when there is no usable output
 * (closed, or a write failed). Always pair with emit_end(), even after NULL. Only for a writer
 * that streams across calls (heap=dump's segments); everything else uses emit_section. */
struct hprof_writer *emit_begin(void);
void emit_end(void);

/* The body of a section: writes its records with w (the output lock held). */
typedef void (*emit_body)(struct hprof_writer *w, void *ctx);

/* What the rows of a section name: n rows, stride bytes apart; each non-NULL pointer is the
 * first row's serial field of that kind (trace, class, thread). */
struct emit_refs {
    size_t n, stride;
    const uint32_t *traces, *classes, *threads;
};

/* The one way a section is written: takes the output lock, writes what refs name (threads,
 * classes, traces, with all they name in turn; refs NULL: nothing), calls body(w, ctx) and
 * releases the lock. Returns false, without calling body, when there is no usable output
 * (closed, or a write failed). */
bool emit_section(const struct emit_refs *refs, emit_body body, void *ctx);

/* After output_open: the empty trace, which THREAD START and other records name. */
void emit_first_records(void);

void emit_string(struct hprof_writer *w, hprof_id id);
/* The class's name string and LOAD CLASS. */
void emit_class(struct hprof_writer *w, uint32_t class_serial);
/* The method's strings, its class and the STACK FRAME. */
void emit_frame(struct hprof_writer *w, uint32_t frame_serial);
/* Its frames, its thread (thread=y) and the STACK TRACE. */
void emit_trace(struct hprof_writer *w, uint32_t trace_serial);
/* The thread's name strings and THREAD START. */
void emit_thread(struct hprof_writer *w, uint32_t thread_serial);

/* Each takes the lock itself. THREAD START of every known thread not written yet (at VM init,
 * at a thread's start, before a dump: threads first seen by a lookup are written here). */
void emit_threads_known(void);
/* THREAD START at the thread's start; THREAD END (after its THREAD START). */
void emit_thread_start(uint32_t thread_serial);
void emit_thread_end(uint32_t thread_serial);
/* Every trace not written yet (the old agent listed all traces at each dump). */
void emit_traces_known(void);

/* An UNLOAD CLASS for each class whose LOAD CLASS is written and that has unloaded since
 * (class_table.h), once; the class is never loaded again. The caller makes sure that nothing
 * written later names such a class (dump_request.h, doc/formats.md). Lock held. */
void emit_unloads(struct hprof_writer *w);

/* Forgets what was written (the output is closed; a later attach opens a new one). */
void emit_reset(void);

#endif
