/* wall=y's thread list (wall_threads.h). */
#include "wall_threads.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jvmti_util.h"
#include "wall_signals.h"

/* The agent's own threads ("HPROF cpu sampler", ...) are no application time. */
#define AGENT_THREAD_PREFIX "HPROF "

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct wall_thread **slots;
static size_t nslots, capslots;
static char *pattern;
static bool all_on = true;
static jclass carrier_class; /* set once at VM init, before any carrier starts */

bool wall_threads_init(const char *names)
{
    if (names && !(pattern = strdup(names)))
        return false;
    return true;
}

void wall_threads_lock(void)
{
    pthread_mutex_lock(&lock);
}

void wall_threads_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

size_t wall_threads_count(void)
{
    return nslots;
}

struct wall_thread *wall_threads_at(size_t i)
{
    return i < nslots ? slots[i] : NULL;
}

static bool name_kept(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    jvmtiThreadInfo ti;
    memset(&ti, 0, sizeof ti);
    if ((*jvmti)->GetThreadInfo(jvmti, thread, &ti) != JVMTI_ERROR_NONE)
        return false;
    const char *name = ti.name ? ti.name : "";
    bool kept = strncmp(name, AGENT_THREAD_PREFIX, strlen(AGENT_THREAD_PREFIX)) != 0 &&
                (!pattern || fnmatch(pattern, name, 0) == 0);
    jvmti_util_free(jvmti, ti.name);
    if (ti.thread_group)
        (*jni)->DeleteLocalRef(jni, ti.thread_group);
    if (ti.context_class_loader)
        (*jni)->DeleteLocalRef(jni, ti.context_class_loader);
    return kept;
}

static void add_slot(JNIEnv *jni, jthread thread, struct thread_info *info, int64_t tick,
                     uint64_t now_ns, uint64_t cpu_ns, bool is_virtual, bool current)
{
    struct wall_thread *t = calloc(1, sizeof *t);
    if (!t)
        return;
    t->is_virtual = is_virtual;
    t->sig_slot = current && !is_virtual ? wall_signals_add_current(jni) : -1;
    t->ref = (*jni)->NewGlobalRef(jni, thread);
    t->info = info;
    t->seen.tick = tick;
    t->seen.cpu_ns = cpu_ns;
    t->seen.visit_ns = now_ns;
    pthread_mutex_lock(&lock);
    t->on = all_on;
    bool known = false;
    for (size_t i = 0; i < nslots && !known; i++)
        known = slots[i]->info == info;
    if (nslots == capslots && !known) {
        size_t cap = capslots ? capslots * 2 : 64;
        struct wall_thread **v = realloc(slots, cap * sizeof *v);
        if (v)
            slots = v, capslots = cap;
    }
    bool added = !known && t->ref && nslots < capslots;
    if (added)
        slots[nslots++] = t;
    pthread_mutex_unlock(&lock);
    if (!added) {
        wall_signals_remove(t->sig_slot);
        if (t->ref)
            (*jni)->DeleteGlobalRef(jni, t->ref);
        free(t);
    }
}

void wall_threads_add(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, int64_t tick, uint64_t now_ns,
                      uint64_t cpu_ns, bool current)
{
    if (!thread || (carrier_class && (*jni)->IsInstanceOf(jni, thread, carrier_class)) ||
        !name_kept(jvmti, jni, thread))
        return;
    struct thread_info *info = thread_table_of(jvmti, jni, thread);
    if (info)
        add_slot(jni, thread, info, tick, now_ns, cpu_ns, false, current);
}

void wall_threads_add_virtual(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread, int64_t tick,
                              uint64_t now_ns)
{
    if (!vthread || !name_kept(jvmti, jni, vthread))
        return;
    struct thread_info *info = thread_table_of(jvmti, jni, vthread);
    if (info)
        add_slot(jni, vthread, info, tick, now_ns, 0, true, false);
}

void wall_threads_skip_carriers(jclass carrier)
{
    carrier_class = carrier;
}

void wall_threads_add_live(jvmtiEnv *jvmti, JNIEnv *jni, jthread current, int64_t tick,
                           uint64_t now_ns)
{
    jint n = 0;
    jthread *threads = NULL;
    if ((*jvmti)->GetAllThreads(jvmti, &n, &threads) != JVMTI_ERROR_NONE)
        return;
    for (jint i = 0; i < n; i++) {
        jlong cpu = 0;
        if ((*jvmti)->GetThreadCpuTime(jvmti, threads[i], &cpu) != JVMTI_ERROR_NONE)
            cpu = 0;
        bool is_current = current && (*jni)->IsSameObject(jni, threads[i], current);
        wall_threads_add(jvmti, jni, threads[i], tick, now_ns, (uint64_t)cpu, is_current);
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    jvmti_util_free(jvmti, threads);
}

void wall_threads_end(JNIEnv *jni, const struct thread_info *info,
                      void (*fn)(struct wall_thread *t, void *arg), void *arg)
{
    struct wall_thread *gone = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nslots; i++) {
        if (slots[i]->info == info) {
            gone = slots[i];
            fn(gone, arg);
            wall_signals_remove(gone->sig_slot); /* no request pending: ticks hold the lock */
            slots[i] = slots[--nslots];          /* order does not matter: the sampler goes round */
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (gone) {
        (*jni)->DeleteGlobalRef(jni, gone->ref);
        free(gone->frames);
        free(gone);
    }
}

void wall_threads_set_on(const struct thread_info *info, bool on)
{
    pthread_mutex_lock(&lock);
    if (!info)
        all_on = on;
    for (size_t i = 0; i < nslots; i++)
        if (!info || slots[i]->info == info)
            slots[i]->on = on;
    pthread_mutex_unlock(&lock);
}

bool wall_threads_reserve(struct wall_thread *t, int n)
{
    if (n <= t->cap)
        return true;
    jvmtiFrameInfo *f = realloc(t->frames, (size_t)n * sizeof *f);
    if (!f)
        return false;
    t->frames = f;
    t->cap = n;
    return true;
}
