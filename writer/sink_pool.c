/* The sink's background threads (sink_internal.h). */
#include "sink_internal.h"
#include "writer_internal.h"

#include <pthread.h>
#include <stdlib.h>

/* With sink_set_threads(s, n > 0), a drained buffer is handed to n threads instead of being
 * compressed and written by the caller: each compresses a whole buffer (one gzip member) with
 * its own deflate state, and whichever thread finishes the next buffer in order writes it, so
 * the output is the same bytes as without threads. The caller goes on filling a fresh buffer
 * (buffers are swapped, not copied) and waits only when every slot is in flight. */

enum job_state { JOB_FREE, JOB_QUEUED, JOB_BUSY, JOB_DONE };

struct sink_job {
    enum job_state state;
    uint64_t seq;
    bool first_member; /* gzip: the member that carries the comment header */
    uint8_t *in;       /* capacity s->cap */
    size_t in_len;
    uint8_t *out; /* gzip output (capacity out_cap), else NULL: in is written */
    size_t out_len;
    bool bad; /* compression failed */
};

struct sink_pool {
    struct hprof_sink *s;
    pthread_t *threads;
    unsigned nthreads;
    pthread_mutex_t lock;
    pthread_cond_t work; /* a job was queued, or stopping */
    pthread_cond_t done; /* a job slot was freed */
    struct sink_job *jobs;
    unsigned njobs;
    size_t out_cap;
    uint64_t next_seq, next_write;
    bool writing; /* a thread is writing jobs out, in order */
    bool stopping;
};

static void job_compress(struct sink_pool *p, struct sink_job *j, struct gz_engine *e)
{
    j->out_len = sink_gzip_compress(e, j->first_member, j->in, j->in_len, j->out, p->out_cap);
    j->bad = j->out_len == 0;
}

/* Writes out, in order, every finished job that is next (lock held on entry and exit). */
static void pool_write_ready(struct sink_pool *p)
{
    if (p->writing)
        return;
    p->writing = true;
    for (;;) {
        struct sink_job *j = &p->jobs[p->next_write % p->njobs];
        if (j->state != JOB_DONE || j->seq != p->next_write)
            break;
        pthread_mutex_unlock(&p->lock);
        struct hprof_sink *s = p->s;
        if (j->bad)
            sink_fail(s, "gzip compression failed");
        else if (!s->failed)
            sink_fd_write(s, j->out ? j->out : j->in, j->out ? j->out_len : j->in_len);
        pthread_mutex_lock(&p->lock);
        j->state = JOB_FREE;
        p->next_write++;
        pthread_cond_broadcast(&p->done);
    }
    p->writing = false;
}

static void *pool_thread(void *arg)
{
    struct sink_pool *p = arg;
    struct gz_engine *e = p->s->gzip ? sink_gzip_engine_new() : NULL;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* The oldest queued job: slots are used in sequence order. */
        struct sink_job *j = NULL;
        for (uint64_t q = p->next_write; q < p->next_seq && !j; q++) {
            struct sink_job *c = &p->jobs[q % p->njobs];
            if (c->state == JOB_QUEUED)
                j = c;
        }
        if (!j) {
            if (p->stopping)
                break;
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        j->state = JOB_BUSY;
        pthread_mutex_unlock(&p->lock);
        if (j->out && !p->s->failed) {
            if (e)
                job_compress(p, j, e);
            else
                j->bad = true;
        }
        pthread_mutex_lock(&p->lock);
        j->state = JOB_DONE;
        pool_write_ready(p);
    }
    pthread_mutex_unlock(&p->lock);
    sink_gzip_engine_free(e);
    return NULL;
}

/* Hands the buffer to the threads and takes a free one in exchange. */
void sink_pool_submit(struct hprof_sink *s)
{
    struct sink_pool *p = s->pool;
    pthread_mutex_lock(&p->lock);
    struct sink_job *j = &p->jobs[p->next_seq % p->njobs];
    while (j->state != JOB_FREE)
        pthread_cond_wait(&p->done, &p->lock);
    uint8_t *in = j->in;
    j->in = s->buf;
    j->in_len = s->len;
    j->first_member = s->gzip && !s->member_written;
    j->bad = false;
    j->seq = p->next_seq++;
    j->state = JOB_QUEUED;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    if (s->gzip)
        s->member_written = true;
    s->buf = in;
    s->len = 0;
}

/* Waits until every submitted buffer is written. */
void sink_pool_wait(struct sink_pool *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->next_write < p->next_seq)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

static void pool_free(struct sink_pool *p)
{
    for (unsigned i = 0; i < p->njobs; i++) {
        free(p->jobs[i].in);
        free(p->jobs[i].out);
    }
    free(p->jobs);
    free(p->threads);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}

void sink_pool_stop(struct hprof_sink *s)
{
    struct sink_pool *p = s->pool;
    if (!p)
        return;
    sink_drain(s);
    sink_pool_wait(p);
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    s->pool = NULL;
    pool_free(p);
}

struct sink_pool *sink_pool_start(struct hprof_sink *s, unsigned nthreads)
{
    struct sink_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->s = s;
    p->njobs = 2 * nthreads + 2;
    p->jobs = calloc(p->njobs, sizeof *p->jobs);
    p->threads = calloc(nthreads, sizeof *p->threads);
    p->out_cap = s->gzip ? sink_gzip_member_bound(s->cap) : 0;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    bool ok = p->jobs && p->threads;
    for (unsigned i = 0; ok && i < p->njobs; i++) {
        p->jobs[i].in = malloc(s->cap);
        p->jobs[i].out = s->gzip ? malloc(p->out_cap) : NULL;
        ok = p->jobs[i].in && (!s->gzip || p->jobs[i].out);
    }
    if (!ok) {
        pool_free(p);
        return NULL;
    }
    for (unsigned i = 0; i < nthreads; i++) {
        if (writer_common_thread_create(&p->threads[i], pool_thread, p) != 0)
            break;
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        pool_free(p);
        return NULL;
    }
    return p;
}

unsigned sink_pool_threads(const struct sink_pool *p)
{
    return p->nthreads;
}
