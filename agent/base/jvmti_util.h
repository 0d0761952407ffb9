/* Small helpers around jvmtiEnv: the agent's one environment, error names, deallocation. */
#ifndef HPROF_JVMTI_UTIL_H
#define HPROF_JVMTI_UTIL_H

#include <jvmti.h>
#include <stdbool.h>

#include "hprof_error.h"

/* The agent's environment, set once in Agent_OnLoad/OnAttach before any event. */
jvmtiEnv *jvmti_util_env(void);
void jvmti_util_set_env(jvmtiEnv *jvmti);

/* The JavaVM, for agent threads that need a JNIEnv. */
JavaVM *jvmti_util_vm(void);
void jvmti_util_set_vm(JavaVM *vm);

/* Logs "HPROF ERROR: <what> failed: <error name> (<code>)" and returns true if err != NONE. */
bool jvmti_util_failed(jvmtiEnv *jvmti, jvmtiError err, const char *what);
/* The same message as an error value (hprof_error.h), for start-up paths whose caller logs;
 * hprof_ok() if err == NONE. */
struct hprof_error jvmti_util_error(jvmtiEnv *jvmti, jvmtiError err, const char *what);

/* Deallocates memory JVMTI handed out; NULL is fine. */
void jvmti_util_free(jvmtiEnv *jvmti, void *p);

/* Starts an agent thread (RunAgentThread) running fn(arg), its java.lang.Thread named name.
 * Returns false when it could not; the caller says what is lost, in one message. */
bool jvmti_util_start_agent_thread(jvmtiEnv *jvmti, JNIEnv *jni, const char *name,
                                   jvmtiStartFunction fn, void *arg, jint priority);

/* True while the VM is in the live phase (JVMTI calls that need it are allowed). */
bool jvmti_util_live(jvmtiEnv *jvmti);

/* can_support_virtual_threads (JDK 21+) by bit position, since the JDK 17 jvmti.h this agent
 * may be compiled against has no such field. jvmtiCapabilities is a struct of one-bit fields
 * in a fixed order that JVMTI only ever appends to: can_support_virtual_threads is field 44
 * (counting can_tag_objects as 0), right after can_generate_sampled_object_alloc_events (43).
 * The C ABIs of the platforms the agent runs on allocate bit-fields from the low bit on
 * little-endian targets and from the high bit on big-endian ones, in 32-bit units. Whether
 * the running VM offers it is asked with GetPotentialCapabilities, never assumed. */
#define JVMTI_CAP_VIRTUAL_THREADS_BIT 44
void jvmti_util_caps_set_virtual_threads(jvmtiCapabilities *caps);
bool jvmti_util_caps_has_virtual_threads(const jvmtiCapabilities *caps);

/* Adds can_support_virtual_threads when the running VM offers it (JDK 21+). Returns whether
 * the environment has it now. */
bool jvmti_util_add_virtual_threads_capability(jvmtiEnv *jvmti);

/* The index of the extension event named id (e.g. "com.sun.hotspot.events.VirtualThreadMount"),
 * or -1 when the VM has none such. */
jint jvmti_util_extension_event_index(jvmtiEnv *jvmti, const char *id);

/* Sets and enables HotSpot's VirtualThreadMount and VirtualThreadUnmount extension events
 * (JDK 21+; called on the carrier, as jvmtiExtensionEvent with the JNIEnv * and the virtual
 * thread). Returns true when both are on; otherwise leaves neither set and returns false. */
bool jvmti_util_watch_mounts(jvmtiEnv *jvmti, jvmtiExtensionEvent on_mount,
                             jvmtiExtensionEvent on_unmount);

#endif
