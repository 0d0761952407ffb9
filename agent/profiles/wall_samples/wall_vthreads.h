/* wall=y on virtual threads (JDK 21+): the VirtualThreadStart and VirtualThreadEnd events add
 * and drop them in the thread list (wall_threads.h); carrier threads are left out.
 * doc/wall-samples.md, "Virtual threads". */
#ifndef HPROF_WALL_VTHREADS_H
#define HPROF_WALL_VTHREADS_H

#include <jvmti.h>
#include <stdbool.h>

#include "hprof_error.h"

/* At start: adds can_support_virtual_threads to jvmti (the environment the sampler uses) and
 * enables the two events in an environment of wall=y's own (the core's callback table is
 * the JDK 17 one, without them). Nothing on JDK 17. */
struct hprof_error wall_vthreads_start(jvmtiEnv *jvmti);
/* VM init, before the live threads are listed: carriers are not sampled from now on. */
void wall_vthreads_vm_init(JNIEnv *jni);
/* Whether virtual threads are followed. */
bool wall_vthreads_followed(void);

#endif
