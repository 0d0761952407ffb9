/* cpu=samples' whole-process sampling: what a thread the VM does not report to JVMTI is, from
 * its kernel name (/proc/self/task/<tid>/comm, at most 15 characters: HotSpot names its
 * threads, the kernel cuts the names). Pure: no I/O. doc/cpu-samples.md lists the names. */
#ifndef HPROF_THREAD_KINDS_H
#define HPROF_THREAD_KINDS_H

enum thread_kind {
    THREAD_KIND_GC = 0, /* garbage collector workers and concurrent threads */
    THREAD_KIND_JIT,    /* compiler threads and the code cache sweeper */
    THREAD_KIND_VM,     /* the VM Thread and HotSpot's other service threads */
    THREAD_KIND_AGENT,  /* this agent's own threads ("HPROF ...") */
    THREAD_KIND_OTHER,  /* anything else: a Java thread or a native thread */
    THREAD_KIND_COUNT,
};

/* The kind a kernel thread name says. */
enum thread_kind thread_kinds_of(const char *comm);
/* The pseudo-class its samples are shown under: "[GC]", "[JIT]", "[VM]", "[agent]",
 * "[native]". */
const char *thread_kinds_label(enum thread_kind kind);

#endif
