#include "dump_request.h"

#include <pthread.h>

#include "log.h"
#include "output.h"
#include "trace_table.h"

static const struct hprof_profile *const *active;
static size_t nactive;
/* One dump at a time: a SIGQUIT during the exit dump waits rather than interleaving. */
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;

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
    log_info("dumping profile to %s ...", output_name());
    for (size_t i = 0; i < nactive; i++)
        if (active[i]->dump)
            active[i]->dump(req);
    if (req->sections & DUMP_TRACES)
        dump_write_traces();
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
