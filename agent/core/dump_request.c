#include "dump_request.h"

#include <pthread.h>

#include "class_table.h"
#include "log.h"
#include "output.h"
#include "emit.h"

static const struct hprof_profile *const *active;
static size_t nactive;
/* One dump at a time: a SIGQUIT during the exit dump waits rather than interleaving. */
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static bool unloads_at_end;

void dump_set_profiles(const struct hprof_profile *const *profiles, size_t n)
{
    active = profiles;
    nactive = n;
}

void dump_set_unloads_at_end(bool at_end)
{
    unloads_at_end = at_end;
}

/* The unloads learned before the traces are written: a trace interned after them cannot hold
 * a frame of those classes (their methods no longer run), so no later STACK FRAME names them. */
void dump_write_unloads(void)
{
    struct hprof_writer *w = emit_begin();
    if (w)
        emit_unloads(w);
    emit_end();
}

void dump_all(const struct dump_request *req)
{
    pthread_mutex_lock(&dump_lock);
    log_info("dumping profile to %s ...", output_name());
    emit_threads_known(); /* threads a lookup saw first (virtual threads, early events) */
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->dump)
            active[i]->dump(req);
    if (req->sections & DUMP_TRACES) {
        classes_flush_unloads();
        emit_traces_known();
        if (!unloads_at_end)
            dump_write_unloads();
    }
    struct hprof_writer *w = emit_begin();
    if (w)
        w->ops->flush(w);
    emit_end();
    log_info("dump to %s done", output_name());
    pthread_mutex_unlock(&dump_lock);
}

void dump_control(const struct control_request *req)
{
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->control)
            active[i]->control(req);
}
