/* wall=y's stacks by signal (wall_signals.h). */
#include "wall_signals.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agct_stack.h"
#include "clock.h"
#include "segarray.h"

/* A request's life: the sampler moves IDLE -> ASKED and, at collect, DONE -> IDLE or (given
 * up) ASKED -> IDLE; the handler moves ASKED -> WALKING -> DONE. */
enum phase { IDLE = 0, ASKED, WALKING, DONE };

/* A thread that let this many requests in a row go unanswered (the signal blocked in its
 * native code, or starved of CPU) is walked by GetStackTrace from then on. */
#define DEAF_AFTER 3

struct sig_slot {
    _Atomic(uint32_t) gen;   /* bumped at each reuse; the signal's value carries it */
    _Atomic(uint32_t) phase; /* enum phase */
    /* Set when the slot is taken (before it is handed out). */
    JNIEnv *env;
    pid_t tid;
    /* Set by the sampler before ASKED (release), read by the handler after it took it. */
    struct async_frame *frames;
    int depth;
    /* Written by the handler before DONE (release). */
    int nframes;
    uint64_t cpu_ns; /* the thread's CPU time as the handler ends */
    /* The sampler's own. */
    int unanswered;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* slot allocation */
static struct segarray slots;
static uint32_t *free_list;
static size_t nfree, free_cap;
static _Atomic(bool) active;
static pid_t pid;

/* Requests of the tick not answered yet: set by the sampler before it sends them, counted
 * down by the handlers; the sampler sleeps on it (a futex word: 32 bits) and only the last
 * answer wakes it (one wake-up per tick, not one per thread). */
static _Atomic(uint32_t) pending;
static uid_t uid;

static _Atomic(uint64_t) n_sent, n_walked, n_failed, n_timeouts, handler_ns;

static struct sig_slot *slot_at(uint32_t i)
{
    return segarray_at(&slots, i);
}

static void on_signal(int sig, siginfo_t *si, void *ucontext)
{
    (void)sig;
    int saved_errno = errno;
    if (!si || si->si_code != SI_QUEUE || si->si_pid != pid) {
        errno = saved_errno; /* not ours (a timer, kill): nothing to do */
        return;
    }
    uint64_t value = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
    uint32_t index = (uint32_t)value, gen = (uint32_t)(value >> 32);
    if (index >= segarray_count(&slots)) {
        errno = saved_errno;
        return;
    }
    struct sig_slot *s = slot_at(index);
    uint32_t asked = ASKED;
    /* A late signal of a request given up, or of a slot since reused, finds no ASKED of its
     * generation and leaves. */
    if (atomic_load_explicit(&s->gen, memory_order_acquire) != gen ||
        !atomic_compare_exchange_strong_explicit(&s->phase, &asked, WALKING, memory_order_acquire,
                                                 memory_order_relaxed)) {
        errno = saved_errno;
        return;
    }
    uint64_t t0 = clock_thread_cpu_ns();
    s->nframes = agct_stack_walk(s->env, s->frames, s->depth, ucontext);
    uint64_t t1 = clock_thread_cpu_ns();
    s->cpu_ns = t1;
    /* Counted down before DONE: once the sampler has seen every request DONE or taken back,
     * no handler touches the counter of its tick any more. */
    if (atomic_fetch_sub_explicit(&pending, 1, memory_order_acq_rel) == 1)
        syscall(SYS_futex, &pending, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    atomic_store_explicit(&s->phase, DONE, memory_order_release);
    atomic_fetch_add_explicit(&handler_ns, t1 - t0, memory_order_relaxed);
    errno = saved_errno;
}

static bool signal_free(void)
{
    struct sigaction sa;
    if (sigaction(WALL_SIGNALS_SIGNAL, NULL, &sa) != 0)
        return false;
    if (sa.sa_flags & SA_SIGINFO)
        return sa.sa_sigaction == NULL || sa.sa_sigaction == on_signal;
    return sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN;
}

const char *wall_signals_start(void)
{
    if (atomic_load(&active))
        return NULL;
    if (!agct_stack_init())
        return "this VM exports no AsyncGetCallTrace";
    if (!signal_free())
        return "SIGVTALRM is already handled by the application or another agent";
    segarray_init(&slots, sizeof(struct sig_slot));
    pid = getpid();
    uid = getuid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    /* SA_RESTART: a thread signalled as it enters a system call gets it restarted. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(WALL_SIGNALS_SIGNAL, &sa, NULL) != 0)
        return "the SIGVTALRM handler could not be installed";
    atomic_store(&active, true);
    return NULL;
}

bool wall_signals_active(void)
{
    return atomic_load(&active);
}

int32_t wall_signals_add_current(JNIEnv *env)
{
    if (!atomic_load(&active) || !env)
        return -1;
    pthread_mutex_lock(&lock);
    uint32_t index = nfree ? free_list[--nfree] : segarray_append(&slots);
    pthread_mutex_unlock(&lock);
    if (index == UINT32_MAX)
        return -1;
    struct sig_slot *s = slot_at(index);
    s->env = env;
    s->tid = (pid_t)syscall(SYS_gettid);
    s->unanswered = 0;
    atomic_store_explicit(&s->phase, IDLE, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
    return (int32_t)index;
}

void wall_signals_remove(int32_t slot)
{
    if (slot < 0)
        return;
    /* A signal still on its way finds another generation. */
    atomic_fetch_add_explicit(&slot_at((uint32_t)slot)->gen, 1, memory_order_release);
    pthread_mutex_lock(&lock);
    if (nfree == free_cap) {
        size_t cap = free_cap ? free_cap * 2 : 64;
        uint32_t *grown = realloc(free_list, cap * sizeof *grown);
        if (grown)
            free_list = grown, free_cap = cap;
    }
    if (nfree < free_cap) /* else the slot is never reused: lost, not unsafe */
        free_list[nfree++] = (uint32_t)slot;
    pthread_mutex_unlock(&lock);
}

void wall_signals_begin(void)
{
    atomic_store_explicit(&pending, 0, memory_order_relaxed);
}

bool wall_signals_request(int32_t slot, jvmtiFrameInfo *frames, int depth)
{
    if (slot < 0 || depth <= 0)
        return false;
    struct sig_slot *s = slot_at((uint32_t)slot);
    if (s->unanswered >= DEAF_AFTER)
        return false;
    /* Counted before it can be answered. */
    atomic_fetch_add_explicit(&pending, 1, memory_order_relaxed);
    s->frames = (struct async_frame *)(void *)frames; /* same size: agct_stack.c checks */
    s->depth = depth;
    s->nframes = 0;
    atomic_store_explicit(&s->phase, ASKED, memory_order_release);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = WALL_SIGNALS_SIGNAL;
    si.si_code = SI_QUEUE;
    si.si_pid = pid;
    si.si_uid = uid;
    uint64_t value = (uint32_t)slot | (uint64_t)atomic_load(&s->gen) << 32;
    si.si_value.sival_ptr = (void *)(uintptr_t)value;
    if (syscall(SYS_rt_tgsigqueueinfo, pid, s->tid, WALL_SIGNALS_SIGNAL, &si) != 0) {
        uint32_t asked = ASKED;
        if (atomic_compare_exchange_strong(&s->phase, &asked, IDLE)) {
            atomic_fetch_sub_explicit(&pending, 1, memory_order_relaxed);
            return false;
        }
        /* Cannot happen (no signal sent), but a taken request must be collected. */
    }
    atomic_fetch_add_explicit(&n_sent, 1, memory_order_relaxed);
    return true;
}

void wall_signals_wait(uint64_t deadline_ns)
{
    for (;;) {
        uint32_t left = atomic_load_explicit(&pending, memory_order_acquire);
        if (left == 0)
            return;
        uint64_t now = clock_monotonic_ns();
        if (now >= deadline_ns)
            return;
        uint64_t ns = deadline_ns - now;
        struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        /* Returns when the count is no longer left, at the last answer, at the timeout. */
        syscall(SYS_futex, &pending, FUTEX_WAIT_PRIVATE, left, &ts, NULL, 0);
    }
}

int wall_signals_collect(int32_t slot, uint64_t *cpu_ns)
{
    struct sig_slot *s = slot_at((uint32_t)slot);
    *cpu_ns = 0;
    uint32_t asked = ASKED;
    if (atomic_compare_exchange_strong_explicit(&s->phase, &asked, IDLE, memory_order_acquire,
                                                memory_order_acquire)) {
        s->unanswered++; /* given up: the handler will find IDLE */
        atomic_fetch_add_explicit(&n_timeouts, 1, memory_order_relaxed);
        return -1;
    }
    /* WALKING (the walk is a few microseconds) or DONE. */
    while (atomic_load_explicit(&s->phase, memory_order_acquire) != DONE)
        sched_yield();
    int n = s->nframes;
    *cpu_ns = s->cpu_ns;
    atomic_store_explicit(&s->phase, IDLE, memory_order_relaxed);
    s->unanswered = 0;
    if (n > s->depth)
        n = -1;
    if (n >= 0)
        n = agct_stack_to_frame_info((jvmtiFrameInfo *)(void *)s->frames, n);
    atomic_fetch_add_explicit(n >= 0 ? &n_walked : &n_failed, 1, memory_order_relaxed);
    return n;
}

void wall_signals_get_stats(struct wall_signals_stats *out)
{
    out->sent = atomic_load(&n_sent);
    out->walked = atomic_load(&n_walked);
    out->failed = atomic_load(&n_failed);
    out->timeouts = atomic_load(&n_timeouts);
    out->handler_ns = atomic_load(&handler_ns);
}
