#include "dump_request.h"

#include <pthread.h>
#include <stdbool.h>

#include "class_table.h"
#include "emit.h"
#include "env_knobs.h"
#include "log.h"
#include "mem_account.h"
#include "output.h"

static const struct hprof_profile *const *active;
static size_t nactive;
/* One dump at a time: a SIGQUIT during the exit dump waits rather than interleaving. */
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static bool unloads_at_end;
static void (*settings_writer)(struct hprof_writer *w);
/* net=: a heap dump waits this long for the output before it (an earlier dump still going
 * to a slow peer) to leave the send spool; past it the heap dump is refused.
 * HPROF_DUMP_SEND_WAIT_MS (env_knobs) sets a shorter wait, for tests. */
#define DUMP_SEND_WAIT_MS 60000

static int send_wait_ms(void)
{
    int ms = env_knobs()->dump_send_wait_ms;
    return ms >= 0 ? ms : DUMP_SEND_WAIT_MS;
}

void dump_request_set_profiles(const struct hprof_profile *const *profiles, size_t n)
{
    active = profiles;
    nactive = n;
}

void dump_request_set_settings_writer(void (*write_settings)(struct hprof_writer *w))
{
    settings_writer = write_settings;
}

void dump_request_set_unloads_at_end(bool at_end)
{
    unloads_at_end = at_end;
}

/* The unloads learned before the traces are written: a trace interned after them cannot hold
 * a frame of those classes (their methods no longer run), so no later STACK FRAME names them. */
static void write_unloads(struct hprof_writer *w, void *ctx)
{
    (void)ctx;
    emit_unloads(w);
}

void dump_request_write_unloads(void)
{
    emit_section(NULL, write_unloads, NULL);
}

static void flush_output(struct hprof_writer *w, void *ok)
{
    w->ops->flush(w);
    *(bool *)ok = !writer_common_failed(w);
}

void dump_request_all(const struct dump_request *req)
{
    pthread_mutex_lock(&dump_lock);
    struct dump_request r = *req;
    r.write_settings = settings_writer;
    uint64_t left;
    int wait_ms = send_wait_ms();
    if ((r.sections & DUMP_HEAP) && !output_wait_sent(wait_ms, &left)) {
        log_warning("heap dump refused: %.1f MB of earlier output were still waiting to be "
                    "sent to %s after %.1f s (the receiver reads slowly)",
                    (double)left / 1048576.0, output_name(), wait_ms / 1000.0);
        r.sections &= ~(unsigned)DUMP_HEAP;
    }
    log_info("dumping profile to %s ...", output_name());
    emit_threads_known(); /* threads a lookup saw first (virtual threads, early events) */
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->dump)
            active[i]->dump(&r);
    if (r.sections & DUMP_TRACES) {
        class_table_flush_unloads();
        emit_traces_known();
        if (!unloads_at_end)
            dump_request_write_unloads();
    }
    bool ok = false;
    emit_section(NULL, flush_output, &ok);
    mem_account_dump_done();
    if (ok && !output_wait_sent(0, &left))
        log_info("dump to %s done; %.1f MB of it still being sent", output_name(),
                 (double)left / 1048576.0);
    else if (ok)
        log_info("dump to %s done", output_name());
    else
        /* The write error itself was reported once, where it happened. */
        log_info("dump to %s failed: the output could not be written", output_name());
    pthread_mutex_unlock(&dump_lock);
}

void dump_request_control(const struct control_request *req)
{
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->control)
            active[i]->control(req);
}
