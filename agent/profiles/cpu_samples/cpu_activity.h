/* What a cpu=samples sample is: one interval of CPU time used by a Java thread, attributed to
 * the stack the thread has at the sampler's round where its CPU time crosses a whole interval.
 * This file holds which JVMTI thread states can be using the CPU (so their CPU time is worth
 * reading); cpu_credit.h turns CPU time readings into whole samples. Pure C (only the state
 * bits of jvmti.h), unit-tested. doc/cpu-samples.md explains the rule and its biases. */
#ifndef HPROF_CPU_ACTIVITY_H
#define HPROF_CPU_ACTIVITY_H

#include <jvmti.h>

enum cpu_activity {
    CPU_IDLE,         /* sleeping, waiting, parked, blocked on a monitor, suspended, dead */
    CPU_RUNNING_JAVA, /* runnable, not in native code */
    CPU_IN_NATIVE,    /* runnable inside a native method: busy, or waiting for I/O */
};

enum cpu_activity cpu_activity_of_state(jint state);

#endif
