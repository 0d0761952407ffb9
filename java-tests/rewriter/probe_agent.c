/* A test-only JVMTI agent (NOT libhprof.so): it performs, in the smallest possible form, the steps
 * the real agent must take to run rewritten classes against the embedded hprof/Tracker, so that
 * those steps are tested on every JDK before the agent exists. The steps, in order:
 *
 *   Agent_OnLoad:  capabilities can_generate_all_class_hook_events; callbacks; enable VMInit,
 *                  VMDeath and ClassFileLoadHook (the hook does nothing until step 5).
 *   VMInit:        1. JNI DefineClass("hprof/Tracker", loader NULL, embedded bytes): the tracker
 *                     becomes a class of the bootstrap loader, in its unnamed module, visible to
 *                     every loader that delegates to the boot loader. No file, no
 *                     AddToBootstrapClassLoaderSearch.
 *                  2. RegisterNatives nativeEntry/nativeExit (before anything can call them: an
 *                     unregistered native is looked up through Java code).
 *                  3. AddModuleReads(m, tracker's module) for every named module (GetAllModules):
 *                     code in named modules (java.base...) may only call into the unnamed module
 *                     it reads. HotSpot adds these reads by itself for a module whose class was
 *                     changed by a ClassFileLoadHook (Modules.transformedByAgent), but only once
 *                     the module system is up and only when the first class of that module is
 *                     defined; doing it here makes it certain. Run with option "noreads" to see
 *                     HotSpot's own mechanism at work.
 *                  4. SetStaticIntField(engaged, 1).
 *                  5. Start rewriting in the ClassFileLoadHook (classes loaded from now on).
 *   VMDeath:       SetStaticIntField(engaged, 0).
 *
 * Classes loaded before VMInit (nearly 400 in JDK 17 and 25: java.lang, the module system) are
 * not rewritten: rewritten code must not run before the tracker exists. RetransformClasses after
 * step 4 could add them (can_retransform_classes), minus rewriter_should_skip.
 *
 * Options (comma-separated): noreads (skip step 3), quiet. At VMDeath it prints one line:
 *   probe: rewritten <boot> boot + <other> other classes, <n> left alone, <e> errors;
 *          entries <x>, exits <y>, exits without entry <u>
 */
#include <jni.h>
#include <jvmti.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfile_rewriter.h"
#include "tracker_class.h"

static jvmtiEnv *jvmti;
static atomic_int ready;
static atomic_uint next_cnum = 1;
static atomic_ulong rewritten_boot, rewritten_other, unchanged, errors;
static atomic_ulong entries, exits, underflows;
static int opt_noreads, opt_quiet;
static jclass tracker; /* global ref */

/* The call depth of a Java thread, kept in JVMTI thread-local storage of the Thread object the
 * tracker passes. NOT a C thread-local: a virtual thread can enter a method on one carrier and
 * leave it on another (then an OS-thread counter sees exits without entries). The storage holds
 * the depth itself, as a pointer-sized integer. */
static long *depth_slot(jobject thread, void **p)
{
    if ((*jvmti)->GetThreadLocalStorage(jvmti, thread, p) != JVMTI_ERROR_NONE)
        return NULL;
    return (long *)p;
}

static void JNICALL native_entry(JNIEnv *env, jclass cls, jobject thread, jint cnum, jint mnum)
{
    (void)env, (void)cls, (void)cnum, (void)mnum;
    void *p;
    if (depth_slot(thread, &p))
        (*jvmti)->SetThreadLocalStorage(jvmti, thread, (void *)((intptr_t)p + 1));
    atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed);
}

static void JNICALL native_exit(JNIEnv *env, jclass cls, jobject thread, jint cnum, jint mnum)
{
    (void)env, (void)cls, (void)cnum, (void)mnum;
    void *p;
    if (depth_slot(thread, &p)) {
        if ((intptr_t)p == 0)
            atomic_fetch_add_explicit(&underflows, 1, memory_order_relaxed);
        else
            (*jvmti)->SetThreadLocalStorage(jvmti, thread, (void *)((intptr_t)p - 1));
    }
    atomic_fetch_add_explicit(&exits, 1, memory_order_relaxed);
}

static void die(const char *what, int code)
{
    fprintf(stderr, "probe: %s failed (%d)\n", what, code);
    exit(3);
}

static void JNICALL vm_init(jvmtiEnv *jv, JNIEnv *env, jthread thread)
{
    (void)thread;
    /* 1. the tracker, in the bootstrap class loader */
    jclass cls =
        (*env)->DefineClass(env, HPROF_TRACKER_CLASS_NAME, NULL, (const jbyte *)hprof_tracker_class,
                            (jsize)hprof_tracker_class_len);
    if (!cls) {
        (*env)->ExceptionDescribe(env);
        die("DefineClass(hprof/Tracker)", 0);
    }
    tracker = (*env)->NewGlobalRef(env, cls);
    /* 2. natives */
    JNINativeMethod natives[] = {
        {"nativeEntry", "(Ljava/lang/Thread;II)V", (void *)native_entry},
        {"nativeExit", "(Ljava/lang/Thread;II)V", (void *)native_exit},
    };
    if ((*env)->RegisterNatives(env, cls, natives, 2) != 0)
        die("RegisterNatives", 0);
    /* 3. every named module reads the tracker's (unnamed) module */
    if (!opt_noreads) {
        jclass class_class = (*env)->FindClass(env, "java/lang/Class");
        jmethodID get_module =
            (*env)->GetMethodID(env, class_class, "getModule", "()Ljava/lang/Module;");
        jobject tmod = (*env)->CallObjectMethod(env, cls, get_module);
        if (!tmod)
            die("Class.getModule", 0);
        jint n;
        jobject *mods;
        jvmtiError e = (*jv)->GetAllModules(jv, &n, &mods);
        if (e != JVMTI_ERROR_NONE)
            die("GetAllModules", e);
        for (jint i = 0; i < n; i++) {
            e = (*jv)->AddModuleReads(jv, mods[i], tmod);
            if (e != JVMTI_ERROR_NONE)
                die("AddModuleReads", e);
            (*env)->DeleteLocalRef(env, mods[i]);
        }
        (*jv)->Deallocate(jv, (unsigned char *)mods);
    }
    /* 4. engage */
    jfieldID f = (*env)->GetStaticFieldID(env, cls, "engaged", "I");
    if (!f)
        die("GetStaticFieldID(engaged)", 0);
    (*env)->SetStaticIntField(env, cls, f, 1);
    /* 5. rewrite from now on */
    atomic_store(&ready, 1);
}

static void JNICALL vm_death(jvmtiEnv *jv, JNIEnv *env)
{
    (void)jv;
    atomic_store(&ready, 0);
    if (tracker) {
        jfieldID f = (*env)->GetStaticFieldID(env, tracker, "engaged", "I");
        (*env)->SetStaticIntField(env, tracker, f, 0);
    }
    fprintf(stderr,
            "probe: rewritten %lu boot + %lu other classes, %lu left alone, %lu errors; "
            "entries %lu, exits %lu, exits without entry %lu\n",
            atomic_load(&rewritten_boot), atomic_load(&rewritten_other), atomic_load(&unchanged),
            atomic_load(&errors), atomic_load(&entries), atomic_load(&exits),
            atomic_load(&underflows));
}

static void JNICALL class_file_load_hook(jvmtiEnv *jv, JNIEnv *env, jclass redefined,
                                         jobject loader, const char *name, jobject pd, jint len,
                                         const unsigned char *data, jint *new_len,
                                         unsigned char **new_data)
{
    (void)env, (void)redefined, (void)pd;
    if (!atomic_load(&ready) || !name || rewriter_should_skip(name))
        return;
    struct rewrite_config cfg = {
        .tracker_class = HPROF_TRACKER_CLASS_NAME,
        .entry_name = "methodEntry",
        .entry_desc = "(II)V",
        .exit_name = "methodExit",
        .exit_desc = "(II)V",
        .class_number = atomic_fetch_add(&next_cnum, 1),
    };
    struct rewrite_result res;
    char err[256];
    int rc = classfile_rewrite(data, (size_t)len, &cfg, &res, err, sizeof(err));
    if (rc == 0) {
        unsigned char *out;
        if ((*jv)->Allocate(jv, (jlong)res.len, &out) == JVMTI_ERROR_NONE) {
            memcpy(out, res.bytes, res.len);
            *new_data = out;
            *new_len = (jint)res.len;
            atomic_fetch_add(loader ? &rewritten_other : &rewritten_boot, 1);
        }
    } else if (rc == 1) {
        atomic_fetch_add(&unchanged, 1);
    } else {
        atomic_fetch_add(&errors, 1);
        fprintf(stderr, "probe: %s: %s\n", name, err);
    }
    rewrite_result_free(&res);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (options) {
        opt_noreads = strstr(options, "noreads") != NULL;
        opt_quiet = strstr(options, "quiet") != NULL;
    }
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
        return JNI_ERR;
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof(caps));
    caps.can_generate_all_class_hook_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
        return JNI_ERR;
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.VMInit = vm_init;
    cb.VMDeath = vm_death;
    cb.ClassFileLoadHook = class_file_load_hook;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb));
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
    return JNI_OK;
}
