/* The classes cpu=times rewrote, by the class number (cnum) their code passes to the tracker:
 * name, defining loader, the name and descriptor of each method number (mnum), and, once the
 * class is prepared, each method's jmethodID so a dump can name frames through the frame table.
 * Thread-safe: class loads (the ClassFileLoadHook) run on many threads at once. */
#ifndef HPROF_REWRITTEN_CLASSES_H
#define HPROF_REWRITTEN_CLASSES_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

#include "classfile_rewriter.h"

int rewritten_classes_init(void);

/* A fresh class number (>= 1) for a class about to be rewritten; 0 when the table is full or
 * out of memory. */
uint32_t rewritten_classes_reserve(void);

/* Records what a successful rewrite of class `name` (internal form) by `loader` (NULL = boot)
 * numbered cnum. Copies res's method names and descriptors (res keeps its own). */
void rewritten_classes_fill(JNIEnv *jni, uint32_t cnum, const char *name, jobject loader,
                            struct rewrite_result *res);

/* klass is the class cnum numbers (a retransformation or redefinition names it). */
void rewritten_classes_bind(jvmtiEnv *jvmti, uint32_t cnum, jclass klass);

/* ClassPrepare: binds every unbound record of klass's name and loader. */
void rewritten_classes_prepared(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass);

/* The method (cnum, mnum) names, NULL when unknown or not bound. */
jmethodID rewritten_classes_method(uint32_t cnum, uint32_t mnum);

/* "java.lang.String" and "hashCode", "()I" of (cnum, mnum); false when unknown. */
bool rewritten_classes_describe(uint32_t cnum, uint32_t mnum, const char **java_class,
                                const char **method, const char **desc);

/* Whether class cnum is unloaded: its defining loader was collected (never for the boot
 * loader's classes), so none of its methods can run again. */
bool rewritten_classes_unloaded(JNIEnv *jni, uint32_t cnum);

struct rewritten_classes_stats {
    uint32_t classes, bound;
    uint64_t methods;
};
struct rewritten_classes_stats rewritten_classes_stats(void);

#endif
