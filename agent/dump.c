#include "dump.h"

#include <pthread.h>

#include "class_table.h"
#include "log.h"
#include "output.h"
#include "trace_table.h"

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
    struct hprof_writer *w = output_lock();
    if (w)
        classes_write_unloads(w);
    output_unlock();
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
    log_info("dumping profile to %s ...", output_name());
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->dump)
            active[i]->dump(req);
    if (req->sections & DUMP_TRACES) {
        classes_flush_unloads();
        dump_write_traces();
        if (!unloads_at_end)
            dump_write_unloads();
    }
    struct hprof_writer *w = output_lock();
    if (w)
        w->ops->flush(w);
    output_unlock();
    log_info("dump to %s done", output_name());
    pthread_mutex_unlock(&dump_lock);
}

void dump_control(const struct control_request *req)
{
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->control)
            active[i]->control(req);
}
