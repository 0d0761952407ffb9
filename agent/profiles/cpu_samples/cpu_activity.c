#include "cpu_activity.h"

enum cpu_activity cpu_activity_of_state(jint state)
{
    /* RUNNABLE excludes sleeping, Object.wait, park and monitor entry. */
    if (!(state & JVMTI_THREAD_STATE_ALIVE) || !(state & JVMTI_THREAD_STATE_RUNNABLE))
        return CPU_IDLE;
    if (state & (JVMTI_THREAD_STATE_SUSPENDED | JVMTI_THREAD_STATE_TERMINATED))
        return CPU_IDLE;
    if (state & JVMTI_THREAD_STATE_IN_NATIVE)
        return CPU_IN_NATIVE;
    return CPU_RUNNING_JAVA;
}
