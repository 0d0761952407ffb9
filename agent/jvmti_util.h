/* Small helpers around jvmtiEnv: the agent's one environment, error names, deallocation. */
#ifndef HPROF_JVMTI_UTIL_H
#define HPROF_JVMTI_UTIL_H

#include <jvmti.h>
#include <stdbool.h>

/* The agent's environment, set once in Agent_OnLoad/OnAttach before any event. */
jvmtiEnv *agent_jvmti(void);
void agent_set_jvmti(jvmtiEnv *jvmti);

/* The JavaVM, for agent threads that need a JNIEnv. */
JavaVM *agent_vm(void);
void agent_set_vm(JavaVM *vm);

/* Logs "HPROF ERROR: <what> failed: <error name> (<code>)" and returns true if err != NONE. */
bool jvmti_failed(jvmtiEnv *jvmti, jvmtiError err, const char *what);

/* Deallocates memory JVMTI handed out; NULL is fine. */
void jvmti_free(jvmtiEnv *jvmti, void *p);

/* True while the VM is in the live phase (JVMTI calls that need it are allowed). */
bool jvmti_live(jvmtiEnv *jvmti);

#endif
