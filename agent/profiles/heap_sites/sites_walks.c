/* heap=sites, exact mode with default sites: the heap walks that tag objects (untracked ones,
 * a moving default's) and the worker thread that moves default sites. */
#include "heap_sites_internal.h"

/* The worker that moves default sites. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t queue[MOVE_QUEUE]; /* class serials */
    int n;
    bool running, stopping;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* ---- heap walks (exact mode with default sites) ---------------------------------------- */

/* The state of a heap object's class if it has a default site, else NULL. */
struct site_class *sites_walks_default_class(jlong class_tag)
{
    if (tag_site((uint64_t)class_tag) != TAG_SITE_CLASS)
        return NULL;
    struct site_class *k = site_table_class_peek((uint32_t)tag_serial((uint64_t)class_tag));
    if (!k)
        return NULL;
    uint8_t kind = atomic_load_explicit(&k->kind, memory_order_relaxed);
    return kind == SITE_CLASS_DEFAULT || kind == SITE_CLASS_SWITCHING ? k : NULL;
}

/* Objects with no site yet are ones never seen allocated. */
jint JNICALL sites_walks_mark_untracked(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                        void *user_data)
{
    (void)size;
    (void)length;
    (void)user_data;
    if (*tag_ptr == 0 && sites_walks_default_class(class_tag))
        *tag_ptr = (jlong)tag_make(SITE_ID_UNTRACKED, tags_next_serial());
    return 0;
}

/* Untagged objects of default-site classes get their class's current default site as an
 * explicit tag: every class's (user_data NULL), or, in a walk filtered to one class, that
 * class's (user_data its struct site_class). */
jint JNICALL sites_walks_pin_defaults(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
                                      void *user_data)
{
    (void)size;
    (void)length;
    if (*tag_ptr != 0)
        return 0;
    struct site_class *k = user_data ? user_data : sites_walks_default_class(class_tag);
    uint32_t d = k ? atomic_load_explicit(&k->default_site, memory_order_relaxed) : 0;
    if (d)
        *tag_ptr = (jlong)tag_make(d, tags_next_serial());
    return 0;
}

void sites_walks_walk_filtered(jvmtiEnv *jvmti, jint filter, jclass klass,
                               jvmtiHeapIterationCallback cb, void *user_data)
{
    jvmtiHeapCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.heap_iteration_callback = cb;
    jvmti_util_failed(jvmti,
                      (*jvmti)->IterateThroughHeap(jvmti, filter, klass, &callbacks, user_data),
                      "IterateThroughHeap");
}

/* The objects of classes tagged in jvmti (of klass only, unless NULL). */
static void walk_heap_of(jvmtiEnv *jvmti, jclass klass, jvmtiHeapIterationCallback cb,
                         void *user_data)
{
    sites_walks_walk_filtered(jvmti, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, klass, cb, user_data);
}

void sites_walks_walk_default_classes(jvmtiHeapIterationCallback cb, void *user_data)
{
    for (int i = 0; i < tag_envs_count(); i++)
        walk_heap_of(tag_envs_at(i), NULL, cb, user_data);
}

/* Classifies every loaded class, so the walk knows which have default sites. */
void sites_walks_classify_loaded(jvmtiEnv *jvmti, JNIEnv *jni)
{
    jint n = 0;
    jclass *classes = NULL;
    if (jvmti_util_failed(jvmti, (*jvmti)->GetLoadedClasses(jvmti, &n, &classes),
                          "GetLoadedClasses"))
        return;
    for (jint i = 0; i < n; i++) {
        uint32_t serial = class_table_serial_of(jvmti, classes[i]);
        uint8_t kind;
        if (serial)
            sites_alloc_class_state(jvmti, jni, classes[i], serial, &kind);
        if (jni)
            (*jni)->DeleteLocalRef(jni, classes[i]);
    }
    jvmti_util_free(jvmti, classes);
}

/* ---- the worker that moves default sites ----------------------------------------------- */

/* Moves one class's default site: its new objects are all tagged from now on (SWITCHING), a
 * heap walk filtered to the class gives its untagged objects the old default as explicit tags
 * (filtered, the walk looks up the tags of this class's objects only; an unfiltered one looks
 * up every object's, which costs far more where many objects are tagged), then the new
 * default takes over. control_lock held. */
static void move_default(JNIEnv *jni, uint32_t cls, struct site_class *k)
{
    uint8_t expected = SITE_CLASS_DEFAULT;
    jclass klass = (*jni)->NewLocalRef(jni, atomic_load(&k->class_ref));
    if (!klass) /* the class was unloaded: nothing left to move */
        return;
    atomic_fetch_add(&heap_sites_state.epoch, 1);
    if (atomic_compare_exchange_strong(&k->kind, &expected, SITE_CLASS_SWITCHING)) {
        walk_heap_of(sites_alloc_class_env(cls), klass, sites_walks_pin_defaults, k);
        /* A callback whose object the walk may have seen untagged began before this bump;
         * it reads the epoch after the new default, sees it changed and tags its object. */
        atomic_fetch_add(&heap_sites_state.epoch, 1);
        atomic_store(&k->default_site, atomic_load(&k->next_default));
        atomic_store(&k->kind, SITE_CLASS_DEFAULT);
        atomic_fetch_add(&k->moves, 1);
        STAT(STAT_MOVES);
    }
    (*jni)->DeleteLocalRef(jni, klass);
}

static void move_defaults(JNIEnv *jni)
{
    uint32_t batch[MOVE_QUEUE];
    pthread_mutex_lock(&heap_sites_state.control_lock);
    pthread_mutex_lock(&W.lock);
    int n = W.stopping ? 0 : W.n;
    memcpy(batch, W.queue, sizeof *batch * (size_t)n);
    W.n = 0;
    pthread_mutex_unlock(&W.lock);
    for (int i = 0; i < n; i++) {
        struct site_class *k = site_table_class_peek(batch[i]);
        move_default(jni, batch[i], k);
        atomic_store(&k->move_pending, 0);
    }
    pthread_mutex_unlock(&heap_sites_state.control_lock);
}

static void JNICALL worker(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
    (void)jvmti;
    (void)arg;
    pthread_mutex_lock(&W.lock);
    while (!W.stopping) {
        if (W.n == 0) {
            pthread_cond_wait(&W.cond, &W.lock);
            continue;
        }
        pthread_mutex_unlock(&W.lock);
        /* Let requests gather, and leave the application some time between walks. */
        struct timespec delay = {0, MOVE_BATCH_DELAY_MS * 1000000L};
        nanosleep(&delay, NULL);
        move_defaults(jni);
        pthread_mutex_lock(&W.lock);
    }
    W.running = false;
    pthread_cond_broadcast(&W.cond);
    pthread_mutex_unlock(&W.lock);
}

bool sites_walks_queue_move(uint32_t class_serial)
{
    pthread_mutex_lock(&W.lock);
    bool queued = W.running && !W.stopping && W.n < MOVE_QUEUE;
    if (queued) {
        W.queue[W.n++] = class_serial;
        pthread_cond_signal(&W.cond);
    }
    pthread_mutex_unlock(&W.lock);
    return queued;
}

void sites_walks_start_worker(jvmtiEnv *jvmti, JNIEnv *jni)
{
    pthread_mutex_lock(&W.lock);
    W.running = true;
    pthread_mutex_unlock(&W.lock);
    if (!jvmti_util_start_agent_thread(jvmti, jni, "HPROF heap=sites", worker, NULL,
                                       JVMTI_THREAD_MIN_PRIORITY)) {
        log_warning("heap=sites: no worker thread; default sites stay where they start");
        pthread_mutex_lock(&W.lock);
        W.running = false;
        pthread_mutex_unlock(&W.lock);
    }
}

void sites_walks_stop_worker(void)
{
    pthread_mutex_lock(&W.lock);
    W.stopping = true;
    pthread_cond_broadcast(&W.cond);
    while (W.running)
        pthread_cond_wait(&W.cond, &W.lock);
    pthread_mutex_unlock(&W.lock);
}
