#include "dump.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "log.h"
#include "output.h"
#include "trace_table.h"

static const struct hprof_profile *const *active;
static size_t nactive;
/* One dump at a time: a SIGQUIT during the exit dump waits rather than interleaving. */
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
/* net=: a heap dump waits this long for the output before it (an earlier dump still going
 * to a slow peer) to leave the send spool; past it the heap dump is refused.
 * HPROF_DUMP_SEND_WAIT_MS in the environment changes it (tests). */
#define DUMP_SEND_WAIT_MS 60000

static int send_wait_ms(void)
{
    const char *e = getenv("HPROF_DUMP_SEND_WAIT_MS");
    long v = e && *e ? strtol(e, NULL, 10) : -1;
    return v >= 0 && v <= DUMP_SEND_WAIT_MS ? (int)v : DUMP_SEND_WAIT_MS;
}

void dump_set_profiles(const struct hprof_profile *const *profiles, size_t n)
{
    active = profiles;
    nactive = n;
}

void dump_write_traces(void)
{
    struct hprof_writer *w = output_lock();
    if (w) {
        uint32_t n = traces_count();
        for (uint32_t s = 1; s <= n; s++)
            traces_write_once(w, s);
    }
    output_unlock();
}

void dump_all(const struct dump_request *req)
{
    pthread_mutex_lock(&dump_lock);
    struct dump_request r = *req;
    uint64_t left;
    int wait_ms = send_wait_ms();
    if ((r.sections & DUMP_HEAP) && !output_wait_sent(wait_ms, &left)) {
        log_warning("heap dump refused: %.1f MB of earlier output were still waiting to be "
                    "sent to %s after %.1f s (the receiver reads slowly)",
                    (double)left / 1048576.0, output_name(), wait_ms / 1000.0);
        r.sections &= ~(unsigned)DUMP_HEAP;
    }
    log_info("dumping profile to %s ...", output_name());
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->dump)
            active[i]->dump(&r);
    if (r.sections & DUMP_TRACES)
        dump_write_traces();
    struct hprof_writer *w = output_lock();
    bool ok = w != NULL;
    if (w) {
        w->ops->flush(w);
        ok = !sink_failed(w->sink);
    }
    output_unlock();
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

void dump_control(const struct control_request *req)
{
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->control)
            active[i]->control(req);
}
