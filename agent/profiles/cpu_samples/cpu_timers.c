#include "cpu_timers.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "clock.h" /* clock_gettime: async-signal-safe */
#include "late_walk.h"
#include "sample_records.h"
#include "segarray.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum slot_state { SLOT_FREE = 0, SLOT_LIVE, SLOT_ENDED };

struct timer_slot {
    _Atomic(uint32_t) gen;   /* bumped at each reuse; the timer's value carries it */
    _Atomic(uint32_t) state; /* enum slot_state */
    _Atomic(uint32_t) epoch; /* bumped at each switch and clear */
    _Atomic(bool) enabled;
    _Atomic(bool) mounted;
    _Atomic(uintptr_t) vthread;
    _Atomic(uint64_t) lost; /* weight of samples the full ring refused */
    /* Written before the slot is published LIVE (release), read by the handler after. */
    JNIEnv *env;
    uintptr_t owner;
    uintptr_t thread_ref;         /* global reference for late walks, 0 if none */
    uintptr_t stack_lo, stack_hi; /* the thread's stack, for the one-frame retry */
    int timer_id;                 /* the kernel's timer id, -1 when none; guarded by lock */
    uint64_t end_pos;             /* ring position when the thread ended; guarded by lock */
};

/* lock guards slot allocation, the free and ended lists, and every timer_settime and
 * timer_delete (a timer id deleted by its thread may be reused by the kernel at once). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct segarray slots;
static uint32_t *free_list, *ended_list;
static size_t nfree, nended, free_cap, ended_cap;

static bool set_up; /* cpu_timers_setup succeeded: the records' ring exists */
static int64_t interval;
static _Atomic(bool) running;
static _Thread_local int32_t current_slot = -1;
static struct sigaction previous;

static _Atomic(uint64_t) n_signals, n_foreign, n_stale, n_lost, n_threads, n_failures;
static _Atomic(uint64_t) handler_ns; /* CPU time inside the handler, for the verbose message */
static _Atomic(uint64_t) n_retried, n_recovered;

static struct timer_slot *slot_at(uint32_t i)
{
    return segarray_at(&slots, i);
}

/* ---- the handler ------------------------------------------------------------------- */

/* AGCT cannot walk from a pc where no frame is set up: in a stub that pushes no frame (vtable
 * and itable dispatch, many intrinsics) or at a compiled method's first instructions. There
 * the top of the stack still holds the return address into the caller: walked again as if
 * the stub had returned, the sample goes to the calling frame. AGCT checks the frame it is
 * given, so a word that is no return address makes it fail again (the first reason is then
 * kept). x86-64 only. */
static int walk_from_return_address(const struct timer_slot *s, struct sample_record *rec,
                                    int depth, void *ucontext, int first)
{
#if defined(__x86_64__)
    if (!ucontext)
        return first;
    atomic_fetch_add_explicit(&n_retried, 1, memory_order_relaxed);
    ucontext_t copy;
    memcpy(&copy, ucontext, sizeof copy);
    uintptr_t sp = (uintptr_t)copy.uc_mcontext.gregs[REG_RSP];
    if ((sp & 7) != 0 || sp < s->stack_lo || sp + 8 > s->stack_hi)
        return first;
    copy.uc_mcontext.gregs[REG_RIP] = (greg_t) * (const uintptr_t *)sp;
    copy.uc_mcontext.gregs[REG_RSP] = (greg_t)(sp + 8);
    int n = agct_stack_walk(s->env, rec->frames, depth, &copy);
    if (n <= 0) {
        /* A stub that set up a frame pointer (push rbp; mov rbp, rsp): its caller's pc and sp
         * are above the saved rbp. Only when rbp points into this thread's stack (compiled
         * Java code uses rbp as an ordinary register). */
        memcpy(&copy, ucontext, sizeof copy);
        uintptr_t fp = (uintptr_t)copy.uc_mcontext.gregs[REG_RBP];
        if ((fp & 7) != 0 || fp < sp || fp + 16 > s->stack_hi)
            return first;
        const uintptr_t *link = (const uintptr_t *)fp;
        copy.uc_mcontext.gregs[REG_RIP] = (greg_t)link[1];
        copy.uc_mcontext.gregs[REG_RSP] = (greg_t)(fp + 16);
        copy.uc_mcontext.gregs[REG_RBP] = (greg_t)link[0];
        n = agct_stack_walk(s->env, rec->frames, depth, &copy);
        if (n <= 0)
            return first;
    }
    atomic_fetch_add_explicit(&n_recovered, 1, memory_order_relaxed);
    return n;
#else
    (void)s;
    (void)rec;
    (void)depth;
    (void)ucontext;
    return first;
#endif
}

static void on_signal(int sig, siginfo_t *si, void *ucontext)
{
    (void)sig;
    int saved_errno = errno; /* AGCT and the atomics must not change what the thread sees */
    if (!si || si->si_code != SI_TIMER) {
        atomic_fetch_add_explicit(&n_foreign, 1, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    uint64_t value = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
    uint32_t index = (uint32_t)value, gen = (uint32_t)(value >> 32);
    if (!atomic_load_explicit(&running, memory_order_acquire) || index >= segarray_count(&slots)) {
        atomic_fetch_add_explicit(&n_stale, 1, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    struct timer_slot *s = slot_at(index);
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_LIVE ||
        atomic_load_explicit(&s->gen, memory_order_relaxed) != gen) {
        atomic_fetch_add_explicit(&n_stale, 1, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    if (!atomic_load_explicit(&s->enabled, memory_order_relaxed)) {
        errno = saved_errno;
        return; /* switched off; its timer is being disarmed */
    }
    atomic_fetch_add_explicit(&n_signals, 1, memory_order_relaxed);
    uint64_t t0 = clock_thread_cpu_ns();
    uint32_t weight = 1 + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    uint64_t pos;
    struct sample_record *rec = sample_records_claim(&pos);
    if (!rec) {
        atomic_fetch_add_explicit(&s->lost, weight, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_lost, weight, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    rec->slot = index;
    rec->epoch = atomic_load_explicit(&s->epoch, memory_order_acquire);
    rec->weight = weight;
    rec->owner = s->owner;
    rec->vthread = atomic_load_explicit(&s->vthread, memory_order_relaxed);
    rec->mounted = atomic_load_explicit(&s->mounted, memory_order_relaxed);
    int depth = sample_records_depth();
    rec->walked_late = 0;
    rec->pc = ucontext ? (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP] : 0;
    rec->nframes = agct_stack_walk(s->env, rec->frames, depth, ucontext);
    if (rec->nframes == ASYNC_TICKS_UNKNOWN_JAVA || rec->nframes == ASYNC_TICKS_NOT_WALKABLE_JAVA)
        rec->nframes = walk_from_return_address(s, rec, depth, ucontext, rec->nframes);
    /* Out of Java code: the walker publishes it once it has the stack. A carrier's stack
     * would not be its virtual thread's: those stay as AGCT left them. */
    if (!(late_walk_wanted(rec->nframes) && !rec->mounted &&
          late_walk_offer(rec, pos, s->thread_ref)))
        sample_records_publish(pos);
    atomic_fetch_add_explicit(&handler_ns, clock_thread_cpu_ns() - t0, memory_order_relaxed);
    errno = saved_errno;
}

/* ---- set-up -------------------------------------------------------------------------- */

static pid_t current_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* A timer on the current thread's CPU clock that signals this thread with value. */
static int create_timer(uint64_t value, int *timer_id)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = CPU_TIMERS_SIGNAL;
    ev.sigev_value.sival_ptr = (void *)(uintptr_t)value;
    ev.sigev_notify_thread_id = current_tid();
    /* The raw system call: glibc's timer_create may allocate, and its timer_t is not the
     * kernel's id on every version. */
    int id = -1;
    if (syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &ev, &id) != 0)
        return -1;
    *timer_id = id;
    return 0;
}

static void arm(int timer_id, bool on)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (on) {
        its.it_interval.tv_sec = (time_t)(interval / 1000000000);
        its.it_interval.tv_nsec = (long)(interval % 1000000000);
        its.it_value = its.it_interval;
    }
    syscall(SYS_timer_settime, timer_id, 0, &its, NULL);
}

static bool handler_is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_signal;
}

static bool signal_free(const struct sigaction *sa)
{
    if (handler_is_ours(sa))
        return true;
    if (sa->sa_flags & SA_SIGINFO)
        return sa->sa_sigaction == NULL;
    return sa->sa_handler == SIG_DFL || sa->sa_handler == SIG_IGN;
}

enum cpu_timers_setup cpu_timers_setup(int64_t interval_ns, int frames)
{
    if (sigaction(CPU_TIMERS_SIGNAL, NULL, &previous) != 0 || !signal_free(&previous))
        return CPU_TIMERS_SIGNAL_TAKEN;
    int probe = -1;
    if (create_timer(0, &probe) != 0)
        return CPU_TIMERS_NO_TIMER;
    syscall(SYS_timer_delete, probe);

    interval = interval_ns > 0 ? interval_ns : 1000000;
    segarray_init(&slots, sizeof(struct timer_slot));
    if (!sample_records_init(frames))
        return CPU_TIMERS_NO_MEMORY;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigaction now;
    /* Checked again right before installing: someone may have taken it meanwhile. */
    if (sigaction(CPU_TIMERS_SIGNAL, NULL, &now) != 0 || !signal_free(&now) ||
        sigaction(CPU_TIMERS_SIGNAL, &sa, NULL) != 0) {
        sample_records_free();
        return CPU_TIMERS_SIGNAL_TAKEN;
    }
    set_up = true;
    atomic_store_explicit(&running, true, memory_order_release);
    return CPU_TIMERS_OK;
}

bool cpu_timers_active(void)
{
    return atomic_load(&running);
}

bool cpu_timers_handler_intact(void)
{
    struct sigaction now;
    return sigaction(CPU_TIMERS_SIGNAL, NULL, &now) == 0 && handler_is_ours(&now);
}

/* ---- threads --------------------------------------------------------------------------- */

static bool push(uint32_t **list, size_t *n, size_t *cap, uint32_t v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        uint32_t *grown = realloc(*list, c * sizeof *grown);
        if (!grown)
            return false;
        *list = grown;
        *cap = c;
    }
    (*list)[(*n)++] = v;
    return true;
}

int32_t cpu_timers_add_current(JNIEnv *env, uintptr_t owner, uintptr_t thread_ref, bool enabled)
{
    if (!atomic_load(&running) || current_slot >= 0)
        return current_slot;
    pthread_mutex_lock(&lock);
    uint32_t index;
    if (nfree > 0) {
        index = free_list[--nfree];
    } else {
        index = segarray_append(&slots);
        if (index == UINT32_MAX) {
            pthread_mutex_unlock(&lock);
            atomic_fetch_add(&n_failures, 1);
            return -1;
        }
    }
    struct timer_slot *s = slot_at(index);
    uint32_t gen = atomic_load(&s->gen) + 1;
    atomic_store(&s->gen, gen);
    s->env = env;
    s->owner = owner;
    s->thread_ref = 0;
    s->stack_lo = s->stack_hi = 0;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr = NULL;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            s->stack_lo = (uintptr_t)addr;
            s->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
    s->timer_id = -1;
    atomic_store(&s->enabled, enabled);
    atomic_store(&s->mounted, false);
    atomic_store(&s->vthread, 0);
    atomic_store(&s->lost, 0);
    atomic_fetch_add(&s->epoch, 1);
    int id = -1;
    if (!atomic_load(&running) || create_timer(index | (uint64_t)gen << 32, &id) != 0) {
        push(&free_list, &nfree, &free_cap, index); /* cannot fail: it came from there or
                                                     * is new, and the list has room */
        pthread_mutex_unlock(&lock);
        atomic_fetch_add(&n_failures, 1);
        return -1;
    }
    s->timer_id = id;
    s->thread_ref = thread_ref;
    atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
    if (enabled)
        arm(id, true);
    pthread_mutex_unlock(&lock);
    current_slot = (int32_t)index;
    atomic_fetch_add(&n_threads, 1);
    return current_slot;
}

/* Lock held. */
static void end_slot_locked(uint32_t index)
{
    struct timer_slot *s = slot_at(index);
    if (atomic_load(&s->state) != SLOT_LIVE)
        return;
    if (s->timer_id >= 0)
        syscall(SYS_timer_delete, s->timer_id);
    s->timer_id = -1;
    atomic_store_explicit(&s->state, SLOT_ENDED, memory_order_release);
    /* Records of this slot all have positions below this one: the thread's own handler runs
     * on this thread, which is here, and other threads never write its records. */
    s->end_pos = sample_records_claimed();
    if (!push(&ended_list, &nended, &ended_cap, index))
        s->end_pos = UINT64_MAX; /* never reused: a slot lost, not a crash */
}

void cpu_timers_remove_current(void)
{
    if (current_slot < 0)
        return;
    pthread_mutex_lock(&lock);
    end_slot_locked((uint32_t)current_slot);
    pthread_mutex_unlock(&lock);
    current_slot = -1;
}

int32_t cpu_timers_current(void)
{
    return current_slot;
}

void cpu_timers_set_enabled(int32_t index, bool on)
{
    if (index < 0 || (uint32_t)index >= segarray_count(&slots))
        return;
    pthread_mutex_lock(&lock);
    struct timer_slot *s = slot_at((uint32_t)index);
    if (atomic_load(&s->state) == SLOT_LIVE) {
        bool was = atomic_exchange(&s->enabled, on);
        atomic_fetch_add_explicit(&s->epoch, 1, memory_order_release);
        if (was != on && s->timer_id >= 0)
            arm(s->timer_id, on); /* re-armed: a full interval before the next sample */
    }
    pthread_mutex_unlock(&lock);
}

void cpu_timers_bump_epochs(void)
{
    pthread_mutex_lock(&lock);
    uint32_t n = segarray_count(&slots);
    for (uint32_t i = 0; i < n; i++)
        atomic_fetch_add_explicit(&slot_at(i)->epoch, 1, memory_order_release);
    pthread_mutex_unlock(&lock);
}

void cpu_timers_mount_current(uintptr_t vthread, bool mounted)
{
    if (current_slot < 0)
        return;
    struct timer_slot *s = slot_at((uint32_t)current_slot);
    /* Same thread as the handler: a signal sees either the old or the new value. */
    if (vthread)
        atomic_store_explicit(&s->vthread, vthread, memory_order_relaxed);
    atomic_store_explicit(&s->mounted, mounted, memory_order_relaxed);
}

uintptr_t cpu_timers_mounted_vthread(void)
{
    if (current_slot < 0)
        return 0;
    return atomic_load_explicit(&slot_at((uint32_t)current_slot)->vthread, memory_order_relaxed);
}

/* ---- drain side -------------------------------------------------------------------------- */

bool cpu_timers_record_current(const struct sample_record *rec)
{
    if (rec->slot >= segarray_count(&slots))
        return false;
    return atomic_load_explicit(&slot_at(rec->slot)->epoch, memory_order_acquire) == rec->epoch;
}

void cpu_timers_take_lost(void (*fn)(uintptr_t owner, uint64_t weight, void *arg), void *arg)
{
    if (atomic_load_explicit(&n_lost, memory_order_relaxed) == 0)
        return;
    uint32_t n = segarray_count(&slots);
    for (uint32_t i = 0; i < n; i++) {
        struct timer_slot *s = slot_at(i);
        if (atomic_load_explicit(&s->lost, memory_order_relaxed) == 0)
            continue;
        uint64_t w = atomic_exchange(&s->lost, 0);
        if (w)
            fn(s->owner, w, arg);
    }
}

void cpu_timers_recycle(void (*release)(uintptr_t thread_ref, void *arg), void *arg)
{
    /* After a stop, a handler that was already past its checks may still claim a record (above
     * the slot's end position) and hand it to the late walker, which then uses the slot's
     * thread reference: slots ended by a stop are never reused nor their references freed. */
    if (!atomic_load_explicit(&running, memory_order_acquire))
        return;
    uint64_t consumed = sample_records_consumed();
    pthread_mutex_lock(&lock);
    size_t kept = 0;
    for (size_t i = 0; i < nended; i++) {
        uint32_t index = ended_list[i];
        struct timer_slot *s = slot_at(index);
        /* Taking the lost count first: it belongs to the ended thread. */
        if (s->end_pos <= consumed && atomic_load(&s->lost) == 0 &&
            push(&free_list, &nfree, &free_cap, index)) {
            if (s->thread_ref && release)
                release(s->thread_ref, arg);
            s->thread_ref = 0;
            atomic_store(&s->state, SLOT_FREE);
        } else {
            ended_list[kept++] = index;
        }
    }
    nended = kept;
    pthread_mutex_unlock(&lock);
}

void cpu_timers_stop(void)
{
    if (!set_up)
        return;
    atomic_store_explicit(&running, false, memory_order_release);
    pthread_mutex_lock(&lock);
    uint32_t n = segarray_count(&slots);
    for (uint32_t i = 0; i < n; i++)
        end_slot_locked(i);
    pthread_mutex_unlock(&lock);
}

void cpu_timers_get_stats(struct cpu_timers_stats *out)
{
    out->signals = atomic_load(&n_signals);
    out->foreign = atomic_load(&n_foreign);
    out->stale = atomic_load(&n_stale);
    out->lost = atomic_load(&n_lost);
    out->threads = atomic_load(&n_threads);
    out->failures = atomic_load(&n_failures);
    out->handler_ns = atomic_load(&handler_ns);
    out->retried = atomic_load(&n_retried);
    out->recovered = atomic_load(&n_recovered);
}
