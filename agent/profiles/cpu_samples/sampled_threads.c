/* cpu=samples' thread list and switches (sampled_threads.h). */
#include "sampled_threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "async_sampler.h"
#include "clock.h"
#include "cpu_timers.h"
#include "jvmti_util.h"
#include "thread_table.h"

/* A CONTROL command switching sampling off waits at most this long for the round in progress. */
#define OFF_WAIT_NS INT64_C(2000000000)

/* lock guards the thread list, the switches, the round flag and the stop request; changed is
 * signalled when any of them changes. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed;
static struct sampled_thread **list;
static size_t list_len, list_cap;
static size_t nretired;
static bool default_on = true; /* for threads not switched one by one */
static size_t enabled_count;   /* listed, not retired, enabled */
static bool stopping;
static bool in_round; /* the sampler is between its look at the switches and its counts */
/* The round's candidates (sampler thread only). */
static struct sampled_thread **cands;
static size_t cands_cap;

bool sampled_threads_init(void)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return false;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&changed, &attr);
    pthread_condattr_destroy(&attr);
    return rc == 0;
}

/* ---- the thread list ----------------------------------------------------------------- */

static struct sampled_thread *find_locked(const struct thread_info *info)
{
    for (size_t i = 0; i < list_len; i++)
        if (list[i]->info == info && !list[i]->retired)
            return list[i];
    return NULL;
}

/* from_start: seen at its ThreadStart (on the thread itself), so all its CPU time from now on
 * counts (cpu_activity.h: not what its OS thread used before it was attached). Returns the
 * thread's
 * entry (new or listed before), or NULL. The entry stays valid while the thread lives. */
static struct sampled_thread *add_thread(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         bool from_start)
{
    struct thread_info *info = thread_table_of(jvmti, jni, thread);
    if (!info || atomic_load(&info->ended))
        return NULL;
    pthread_mutex_lock(&lock);
    struct sampled_thread *listed = find_locked(info);
    pthread_mutex_unlock(&lock);
    if (listed)
        return listed;

    struct sampled_thread *t = calloc(1, sizeof *t);
    jthread ref = (*jni)->NewGlobalRef(jni, thread);
    if (!t || !ref) {
        free(t);
        if (ref)
            (*jni)->DeleteGlobalRef(jni, ref);
        return NULL;
    }
    t->ref = ref;
    t->info = info;
    t->timer_slot = -1;
    carriers_slot_init(&t->carrier);
    jlong cpu_now = 0;
    if (from_start && (*jvmti)->GetThreadCpuTime(jvmti, thread, &cpu_now) == JVMTI_ERROR_NONE)
        cpu_credit_from_start(&t->credit, (int64_t)cpu_now);

    pthread_mutex_lock(&lock);
    bool added = false;
    struct sampled_thread *found = find_locked(info);
    if (!found) { /* not added meanwhile by VM init's walk */
        if (list_len == list_cap) {
            size_t cap = list_cap ? list_cap * 2 : 64;
            struct sampled_thread **grown = realloc(list, cap * sizeof *grown);
            if (grown) {
                list = grown;
                list_cap = cap;
            }
        }
        if (list_len < list_cap) {
            t->enabled = default_on;
            if (t->enabled)
                enabled_count++;
            list[list_len++] = t;
            added = true;
            pthread_cond_broadcast(&changed);
        }
    }
    pthread_mutex_unlock(&lock);
    if (!added) {
        (*jni)->DeleteGlobalRef(jni, ref);
        carriers_slot_destroy(jni, &t->carrier);
        free(t);
        return found;
    }
    return t;
}

/* On the thread itself: a CPU-time timer, so that signals sample it from now on. */
static void cover_current(JNIEnv *jni, struct sampled_thread *t)
{
    if (!async_sampler_active())
        return;
    pthread_mutex_lock(&lock);
    if (t->timer_slot < 0 && !t->retired)
        /* armed when grown up */
        t->timer_slot = async_sampler_cover_current(jni, t->info, t->ref, false);
    pthread_mutex_unlock(&lock);
}

void sampled_threads_cover_current(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jthread self = NULL;
    if ((*jvmti)->GetCurrentThread(jvmti, &self) != JVMTI_ERROR_NONE || !self)
        return;
    struct sampled_thread *t = add_thread(jvmti, jni, self, false);
    if (t)
        cover_current(jni, t);
    (*jni)->DeleteLocalRef(jni, self);
}

void sampled_threads_started(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    struct sampled_thread *t = add_thread(jvmti, jni, thread, true);
    if (t)
        cover_current(jni, t);
    /* ThreadStart runs on the new thread: bind it, in case it becomes a carrier. */
    if (t && carriers_watching())
        carriers_slot_bind_current(&t->carrier);
}

static void retire_locked(struct sampled_thread *t)
{
    if (t->retired)
        return;
    t->retired = true;
    nretired++;
    if (t->enabled)
        enabled_count--;
}

void sampled_threads_ended(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    carriers_slot_bind_current(NULL); /* ThreadEnd runs on the ending thread */
    struct thread_info *info = thread_table_of(jvmti, jni, thread);
    pthread_mutex_lock(&lock);
    struct sampled_thread *t = info ? find_locked(info) : NULL;
    /* Its timer goes with its entry's slot number, under lock, as switches are:
     * the slot may serve another thread once the drain is past this one's samples. */
    async_sampler_uncover_current(jni);
    if (t) {
        t->timer_slot = -1;
        t->covered = false;
        retire_locked(t);
    }
    pthread_mutex_unlock(&lock);
}

void sampled_threads_add_live(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jthread *threads = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetAllThreads(jvmti, &n, &threads), "GetAllThreads"))
        return;
    for (jint i = 0; i < n; i++) {
        add_thread(jvmti, jni, threads[i], false);
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    jvmti_util_free(jvmti, threads);
}

/* Sampler thread only: it alone holds entry pointers outside the lock, and not while this
 * runs. */
void sampled_threads_free_retired(JNIEnv *jni)
{
    pthread_mutex_lock(&lock);
    if (nretired == 0) {
        pthread_mutex_unlock(&lock);
        return;
    }
    struct sampled_thread *gone_small[64];
    struct sampled_thread **gone = nretired <= 64 ? gone_small : malloc(nretired * sizeof *gone);
    size_t ngone = 0, kept = 0;
    for (size_t i = 0; i < list_len; i++) {
        if (list[i]->retired && gone)
            gone[ngone++] = list[i];
        else
            list[kept++] = list[i];
    }
    list_len = kept;
    nretired = gone ? 0 : nretired;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < ngone; i++) {
        (*jni)->DeleteGlobalRef(jni, gone[i]->ref);
        carriers_slot_destroy(jni, &gone[i]->carrier);
        free(gone[i]);
    }
    if (gone != gone_small)
        free(gone);
}

/* ---- the sampler thread's side --------------------------------------------------------- */

static bool sampling_on_locked(void)
{
    return default_on || enabled_count > 0;
}

void sampled_threads_forget_timer_of(JNIEnv *jni, const struct thread_info *self)
{
    pthread_mutex_lock(&lock);
    struct sampled_thread *me = self ? find_locked(self) : NULL;
    if (me && me->timer_slot >= 0) {
        async_sampler_uncover_current(jni);
        me->timer_slot = -1;
        me->covered = false;
    }
    pthread_mutex_unlock(&lock);
}

void sampled_threads_uncover_all(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < list_len; i++) {
        list[i]->timer_slot = -1;
        list[i]->covered = false;
        list[i]->fresh_start = true; /* its CPU since the last round is lost */
    }
    pthread_mutex_unlock(&lock);
}

size_t sampled_threads_uncovered(const struct thread_info *self)
{
    pthread_mutex_lock(&lock);
    size_t n = 0;
    for (size_t i = 0; i < list_len; i++)
        if (list[i]->enabled && !list[i]->retired && !list[i]->covered && list[i]->info != self)
            n++;
    pthread_mutex_unlock(&lock);
    return n;
}

void sampled_threads_wait(int64_t until_ns, bool paused)
{
    struct timespec until = clock_timespec_of(until_ns);
    pthread_mutex_lock(&lock);
    if (!stopping && sampling_on_locked() != paused)
        pthread_cond_timedwait(&changed, &lock, &until);
    pthread_mutex_unlock(&lock);
}

void sampled_threads_round_begin(void)
{
    pthread_mutex_lock(&lock);
    in_round = true;
    pthread_mutex_unlock(&lock);
}

void sampled_threads_round_end(void)
{
    pthread_mutex_lock(&lock);
    in_round = false;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

struct sampled_thread **sampled_threads_gather(const struct thread_info *self, size_t *n)
{
    pthread_mutex_lock(&lock);
    *n = 0;
    if (list_len > cands_cap) {
        size_t cap = list_len + list_len / 2 + 16;
        struct sampled_thread **c = realloc(cands, cap * sizeof *c);
        if (c) {
            cands = c;
            cands_cap = cap;
        }
    }
    if (list_len <= cands_cap) {
        for (size_t i = 0; i < list_len; i++) {
            struct sampled_thread *t = list[i];
            if (t->fresh_start) {
                cpu_credit_reset(&t->credit);
                t->fresh_start = false;
            }
            if (t->enabled && !t->retired && t->info != self && !t->covered)
                cands[(*n)++] = t;
        }
    }
    pthread_mutex_unlock(&lock);
    return cands;
}

void sampled_threads_cover_grown(struct sampled_thread *t)
{
    pthread_mutex_lock(&lock);
    if (t->timer_slot >= 0 && !t->retired && !t->covered) {
        t->covered = true;
        cpu_timers_set_enabled(t->timer_slot, t->enabled);
    }
    pthread_mutex_unlock(&lock);
}

void sampled_threads_request_stop(void)
{
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

bool sampled_threads_stopping(void)
{
    pthread_mutex_lock(&lock);
    bool s = stopping;
    pthread_mutex_unlock(&lock);
    return s;
}

/* ---- control ------------------------------------------------------------------------- */

void sampled_threads_set_sampling(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, bool on)
{
    struct thread_info *info = NULL;
    if (thread) {
        add_thread(jvmti, jni, thread, false); /* started before the agent was attached */
        info = thread_table_of(jvmti, jni, thread);
        if (!info)
            return;
    }
    pthread_mutex_lock(&lock);
    if (!thread) {
        default_on = on;
        enabled_count = 0;
        for (size_t i = 0; i < list_len; i++) {
            if (on && !list[i]->enabled)
                list[i]->fresh_start = true;
            list[i]->enabled = on;
            if (on && !list[i]->retired)
                enabled_count++;
            if (list[i]->covered)
                cpu_timers_set_enabled(list[i]->timer_slot, on);
        }
    } else {
        struct sampled_thread *t = find_locked(info);
        if (t && t->enabled != on) {
            t->enabled = on;
            t->fresh_start = on;
            if (on)
                enabled_count++;
            else
                enabled_count--;
            if (t->covered)
                cpu_timers_set_enabled(t->timer_slot, on);
        }
    }
    pthread_cond_broadcast(&changed);
    /* Once the command returns, no sample of a thread switched off is added: a round in
     * progress read the switches before the change. */
    struct timespec until = clock_timespec_of((int64_t)clock_monotonic_ns() + OFF_WAIT_NS);
    while (!on && in_round && !stopping)
        if (pthread_cond_timedwait(&changed, &lock, &until) != 0)
            break;
    pthread_mutex_unlock(&lock);
}

bool sampled_threads_sampling(void)
{
    pthread_mutex_lock(&lock);
    bool on = sampling_on_locked();
    pthread_mutex_unlock(&lock);
    return on;
}
