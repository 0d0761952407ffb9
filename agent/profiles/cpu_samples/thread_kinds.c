/* Kernel thread names to kinds (thread_kinds.h). */
#include "thread_kinds.h"

#include <stdbool.h>
#include <string.h>

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool starts_any(const char *s, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (starts(s, *prefixes))
            return true;
    return false;
}

/* HotSpot's names on JDK 17-25, as the kernel keeps them (15 characters). */
static const char *const gc_names[] = {
    "GC Thread#", /* Parallel and G1 workers */
    "G1 ",        /* G1 Main Marker, G1 Conc#n, G1 Refine#n, G1 Service, G1 Young RemSet */
    "ZDriver",    "ZDirector",  "ZWorker",    "ZStat",       "ZUnmapper", "ZUncommitter",
    "ZRelocat",   "ZMarkStack", "Shenandoah", "StringDedup", /* JDK 18+: the string deduplication
                                                                thread */
    "StrDedup",   NULL,
};
static const char *const jit_names[] = {
    "C1 CompilerThre", "C2 CompilerThre", "JVMCI", "Sweeper thread", NULL,
};
static const char *const vm_names[] = {
    "VM Thread", "VM Periodic Tas", "Service Thread", "Monitor Deflati", "Notification Th", NULL,
};

enum thread_kind thread_kinds_of(const char *comm)
{
    if (starts(comm, "HPROF"))
        return THREAD_KIND_AGENT;
    if (starts_any(comm, gc_names))
        return THREAD_KIND_GC;
    if (starts_any(comm, jit_names))
        return THREAD_KIND_JIT;
    if (starts_any(comm, vm_names))
        return THREAD_KIND_VM;
    return THREAD_KIND_OTHER;
}

const char *thread_kinds_label(enum thread_kind kind)
{
    static const char *const labels[THREAD_KIND_COUNT] = {"[GC]", "[JIT]", "[VM]", "[agent]",
                                                          "[native]"};
    return kind < THREAD_KIND_COUNT ? labels[kind] : "[native]";
}
