/* cpu=samples' whole-process engine (process_threads.h): /proc/self/task, per-thread CPU
 * clocks, proportional credit under pseudo-frames. */
#include "process_threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "class_table.h"
#include "clock.h"
#include "cpu_profile.h"
#include "frame_table.h"
#include "log.h"
#include "trace_table.h"
#include "writer.h"

/* A thread of unknown name is credited only once it has been seen this many scans without
 * registering as a Java thread (its ThreadStart may come a little after /proc shows it). */
#define JAVA_GRACE_SCANS 2

/* One pseudo-frame "[kind].name": its address is the pseudo-method's id (never freed, so
 * never a live jmethodID's address). */
struct pseudo_frame {
    struct pseudo_frame *next;
    enum thread_kind kind;
    char name[16];
};

struct task {
    pid_t tid;
    enum thread_kind kind;
    bool java;    /* a Java thread: sampled by the other engines */
    bool seen;    /* in this scan's listing */
    uint64_t age; /* scans since first seen */
    uint64_t last_ns, carry_ns;
    struct pseudo_frame *frame;
};

struct java_tid {
    pid_t tid;
    uint64_t scan; /* the scan count when it registered */
};

static int64_t interval_ns = 10000000;
static bool with_agent, active;
static bool all_on = true; /* the last CONTROL switch for all threads (guarded by scan_lock) */

/* scan_lock guards everything below but the Java tids. */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct task *tasks;
static size_t ntasks, cap_tasks;
static struct pseudo_frame *frames;
static uint32_t kind_class[THREAD_KIND_COUNT];
static uint64_t next_scan_ns;
static struct process_threads_stats st;

/* java_lock guards the Java threads' kernel ids. */
static pthread_mutex_t java_lock = PTHREAD_MUTEX_INITIALIZER;
static struct java_tid *java_tids;
static size_t njava, cap_java;

void process_threads_init(int64_t interval, bool agent_threads)
{
    interval_ns = interval > 0 ? interval : 1;
    with_agent = agent_threads;
}

bool process_threads_active(void)
{
    return active;
}

static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

void process_threads_java_current(void)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    pthread_mutex_lock(&java_lock);
    if (grow((void **)&java_tids, &cap_java, njava, sizeof *java_tids))
        java_tids[njava++] = (struct java_tid){tid, __atomic_load_n(&st.scans, __ATOMIC_RELAXED)};
    pthread_mutex_unlock(&java_lock);
}

static bool is_java_tid(pid_t tid)
{
    bool found = false;
    pthread_mutex_lock(&java_lock);
    for (size_t i = 0; i < njava && !found; i++)
        found = java_tids[i].tid == tid;
    pthread_mutex_unlock(&java_lock);
    return found;
}

/* Drops the ids of Java threads that are gone (not in the listing), once no scan can still
 * be about to see them for the first time. */
static void prune_java_tids(void)
{
    pthread_mutex_lock(&java_lock);
    size_t keep = 0;
    for (size_t i = 0; i < njava; i++) {
        bool live = java_tids[i].scan + 1 >= st.scans;
        for (size_t k = 0; k < ntasks && !live; k++)
            live = tasks[k].tid == java_tids[i].tid;
        if (live)
            java_tids[keep++] = java_tids[i];
    }
    njava = keep;
    pthread_mutex_unlock(&java_lock);
}

/* The CPU clock of another thread of this process (the kernel's per-thread CPUCLOCK_SCHED
 * encoding, as pthread_getcpuclockid makes for a pthread_t). */
static clockid_t thread_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static bool read_cpu(pid_t tid, uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(thread_clock(tid), &ts) != 0)
        return false; /* the thread has ended */
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return true;
}

static void read_comm(pid_t tid, char name[16])
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    name[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, name, 15);
    close(fd);
    if (n < 0)
        n = 0;
    name[n] = '\0';
    char *nl = strchr(name, '\n');
    if (nl)
        *nl = '\0';
}

static struct pseudo_frame *frame_for(enum thread_kind kind, const char *name)
{
    for (struct pseudo_frame *f = frames; f; f = f->next)
        if (f->kind == kind && strcmp(f->name, name) == 0)
            return f;
    struct pseudo_frame *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->kind = kind;
    snprintf(f->name, sizeof f->name, "%s", name[0] ? name : "?");
    for (char *c = f->name; *c; c++)
        if (*c == ' ' || *c == '\t')
            *c = '_'; /* a report row's method is one word: "[VM].VM_Thread" */
    if (!kind_class[kind] ||
        !frame_table_register_synthetic((jmethodID)(void *)f, kind_class[kind], f->name)) {
        free(f);
        return NULL;
    }
    f->next = frames;
    frames = f;
    return f;
}

static void credit(jvmtiEnv *jvmti, struct task *t, uint64_t n)
{
    uint32_t serial = HPROF_TRACE_SERIAL_NONE;
    if (!t->frame)
        t->frame = frame_for(t->kind, "?");
    if (t->frame && trace_table_depth() > 0) {
        jvmtiFrameInfo f = {(jmethodID)(void *)t->frame, 0};
        serial = trace_table_intern(jvmti, &f, 1, 0);
    }
    cpu_profile_add(serial, n);
    st.samples[t->kind] += n;
}

static struct task *find_task(pid_t tid)
{
    for (size_t i = 0; i < ntasks; i++)
        if (tasks[i].tid == tid)
            return &tasks[i];
    return NULL;
}

/* Reads the listing: new threads get an entry, every listed one is marked seen. */
static void list_tasks(bool first)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        struct task *t = find_task((pid_t)tid);
        if (!t) {
            if (!grow((void **)&tasks, &cap_tasks, ntasks, sizeof *tasks))
                break;
            t = &tasks[ntasks++];
            memset(t, 0, sizeof *t);
            t->tid = (pid_t)tid;
            char name[16];
            read_comm(t->tid, name);
            t->kind = thread_kinds_of(name);
            t->frame = frame_for(t->kind, name);
            /* Alive at the first scan: its CPU time before is not ours to count, and a
             * thread of unknown name is a Java thread started before the agent. */
            t->java = first && t->kind == THREAD_KIND_OTHER;
            if (first && !read_cpu(t->tid, &t->last_ns))
                t->last_ns = 0;
            if (t->kind != THREAD_KIND_OTHER)
                st.threads[t->kind]++;
        }
        t->seen = true;
    }
    closedir(d);
}

static void scan_locked(jvmtiEnv *jvmti, bool counting, bool first)
{
    uint64_t t0 = clock_thread_cpu_ns();
    for (size_t i = 0; i < ntasks; i++)
        tasks[i].seen = false;
    list_tasks(first);
    size_t keep = 0;
    for (size_t i = 0; i < ntasks; i++) {
        struct task *t = &tasks[i];
        if (!t->seen)
            continue; /* ended: its time since the last scan is lost */
        t->age++;
        if (!t->java && is_java_tid(t->tid))
            t->java = true;
        bool ours = !t->java && (t->kind != THREAD_KIND_AGENT || with_agent) &&
                    (t->kind != THREAD_KIND_OTHER || t->age > JAVA_GRACE_SCANS);
        uint64_t now;
        if (ours && read_cpu(t->tid, &now)) {
            if (now > t->last_ns && counting && all_on) {
                if (t->kind == THREAD_KIND_OTHER && t->age == JAVA_GRACE_SCANS + 1)
                    st.threads[THREAD_KIND_OTHER]++;
                t->carry_ns += now - t->last_ns;
                uint64_t n = t->carry_ns / (uint64_t)interval_ns;
                t->carry_ns %= (uint64_t)interval_ns;
                if (n)
                    credit(jvmti, t, n);
            }
            t->last_ns = now;
        }
        tasks[keep++] = *t;
    }
    ntasks = keep;
    __atomic_add_fetch(&st.scans, 1, __ATOMIC_RELAXED);
    prune_java_tids();
    st.scan_ns += clock_thread_cpu_ns() - t0;
}

void process_threads_start(jvmtiEnv *jvmti)
{
    pthread_mutex_lock(&scan_lock);
    static const enum thread_kind kinds[] = {THREAD_KIND_GC, THREAD_KIND_JIT, THREAD_KIND_VM,
                                             THREAD_KIND_AGENT, THREAD_KIND_OTHER};
    bool ok = true;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && ok; i++) {
        kind_class[kinds[i]] = class_table_register_synthetic(thread_kinds_label(kinds[i]));
        ok = kind_class[kinds[i]] != 0;
    }
    if (ok) {
        scan_locked(jvmti, false, true);
        next_scan_ns = clock_monotonic_ns() + PROCESS_THREADS_PERIOD_NS;
        active = true;
    }
    pthread_mutex_unlock(&scan_lock);
}

void process_threads_scan(jvmtiEnv *jvmti, bool counting)
{
    if (!active)
        return;
    pthread_mutex_lock(&scan_lock);
    scan_locked(jvmti, counting, false);
    next_scan_ns = clock_monotonic_ns() + PROCESS_THREADS_PERIOD_NS;
    pthread_mutex_unlock(&scan_lock);
}

void process_threads_tick(jvmtiEnv *jvmti, bool counting)
{
    if (active && clock_monotonic_ns() >= __atomic_load_n(&next_scan_ns, __ATOMIC_RELAXED))
        process_threads_scan(jvmti, counting);
}

void process_threads_switch_all(bool on)
{
    pthread_mutex_lock(&scan_lock); /* a scan in progress credits before the switch */
    all_on = on;
    pthread_mutex_unlock(&scan_lock);
}

void process_threads_get_stats(struct process_threads_stats *out)
{
    pthread_mutex_lock(&scan_lock);
    *out = st;
    pthread_mutex_unlock(&scan_lock);
}

void process_threads_log_stats(void)
{
    struct hprof_cost_row *rows = NULL;
    uint64_t total = 0;
    cpu_profile_snapshot(&rows, &total);
    free(rows);
    struct process_threads_stats s;
    process_threads_get_stats(&s);
    uint64_t others = 0;
    for (int k = 0; k < THREAD_KIND_COUNT; k++)
        others += s.samples[k];
    struct cpu_profile_drain_stats d;
    cpu_profile_get_drain_stats(&d);
    log_info("cpu=samples: %llu samples of Java threads in native code (a library's function on "
             "top of the Java frames)",
             (unsigned long long)d.native_top);
    if (!active) {
        log_info("cpu=samples: %llu samples, all of Java threads (vmthreads=n)",
                 (unsigned long long)total);
        return;
    }
    log_info("cpu=samples: samples by kind: Java threads %llu, GC %llu, JIT %llu, VM %llu, "
             "native threads %llu, agent %llu (%llu/%llu/%llu/%llu threads); %llu scans of "
             "/proc/self/task, %.1f us of CPU each",
             (unsigned long long)(total > others ? total - others : 0),
             (unsigned long long)s.samples[THREAD_KIND_GC],
             (unsigned long long)s.samples[THREAD_KIND_JIT],
             (unsigned long long)s.samples[THREAD_KIND_VM],
             (unsigned long long)s.samples[THREAD_KIND_OTHER],
             (unsigned long long)s.samples[THREAD_KIND_AGENT],
             (unsigned long long)s.threads[THREAD_KIND_GC],
             (unsigned long long)s.threads[THREAD_KIND_JIT],
             (unsigned long long)s.threads[THREAD_KIND_VM],
             (unsigned long long)s.threads[THREAD_KIND_OTHER], (unsigned long long)s.scans,
             s.scans ? (double)s.scan_ns / (double)s.scans / 1e3 : 0.0);
}
