/* The class-file rewriter behind cpu=times and cpu=old: inserts calls to a tracker class at the
 * entry and at every exit of every method. Pure C11: no JVMTI, no JNI; the agent calls it from its
 * ClassFileLoadHook.
 *
 * What a rewritten method does (cnum = cfg->class_number, mnum = the method's index in the class
 * file's methods table):
 *
 *   at offset 0:            push cnum; push mnum; invokestatic Tracker.methodEntry(II)V
 *   before every *return:   push cnum; push mnum; invokestatic Tracker.methodExit(II)V
 *   appended handler(s):    push cnum; push mnum; invokestatic Tracker.methodExit(II)V; athrow
 *
 * The appended catch-all handler entries come last in the exception table, so the method's own
 * handlers keep priority; they cover the original code except the exit sequences and the return
 * instructions themselves (an exception thrown by methodExit is never reported twice). In a
 * constructor the verifier forbids any handler around the invokespecial that initializes `this`
 * (super(...) or this(...)); the instructions before it are covered by a handler whose frame
 * holds uninitializedThis, the ones after it by the ordinary handler. So an exception thrown by
 * the super constructor itself propagates out of the constructor WITHOUT a methodExit for it:
 * the tracker's consumer must accept an exit that names a frame below the top of its shadow
 * stack and pop the frames above it (they ended with that exception).
 *
 * Everything the JVM checks stays right: branch offsets (16-bit branches that no longer reach are
 * widened: goto -> goto_w, jsr -> jsr_w, if<cond> -> if<!cond> +8; goto_w), switch padding, the
 * exception table, LineNumberTable, LocalVariableTable, LocalVariableTypeTable, type annotations
 * on code, StackMapTable (decoded, shifted, new frames added, re-encoded), max_stack. Class files
 * of versions 45 to 69 (JDK 1.1 to JDK 25) are handled; below 50 there is no StackMapTable to keep
 * (and jsr/ret are relocated like any branch). */
#ifndef HPROF_CLASSFILE_REWRITER_H
#define HPROF_CLASSFILE_REWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Newest class-file major version the rewriter knows (JDK 25). Newer classes are left alone:
 * their format may hold things this code cannot see (return 1). */
#define REWRITER_MAX_MAJOR 69

struct rewrite_config {
    const char *tracker_class; /* internal name, e.g. "hprof/Tracker" */
    const char *entry_name;    /* "methodEntry" */
    const char *entry_desc;    /* "(II)V" */
    const char *exit_name;     /* "methodExit" */
    const char *exit_desc;     /* "(II)V" */
    uint32_t class_number;     /* cnum passed to the tracker (as a Java int), chosen by the agent */
};

struct rewrite_result {
    uint8_t *bytes; /* the new class file (malloc'd), NULL when the class is left unchanged */
    size_t len;
    uint32_t nmethods;   /* methods in the class, numbered 0..n-1 in class-file order (= mnum) */
    char **method_names; /* per mnum, NUL-terminated modified UTF-8 ("<init>", "run", ...) */
    char **method_descs; /* per mnum ("(Ljava/lang/String;)V") */
    bool *instrumented;  /* per mnum: true if the method now calls the tracker */
    uint32_t skipped;    /* methods with code left alone (code would pass 65535 bytes, or a
                            stack map frame could not be built); abstract/native methods have no
                            code and are not counted here */
};

/* Rewrites the class file in[0..len).
 * Returns 0: out->bytes holds the new class file and the method tables are filled.
 *         1: leave the class unchanged: out->bytes is NULL; the method tables are filled if the
 *            class could be read (nothing to instrument, or a class newer than
 *            REWRITER_MAX_MAJOR), and are empty for the tracker class itself. err says why.
 *        <0: malformed class file or out of memory; err holds a one-line reason; out is empty.
 * Never reads outside in[0..len). out must be released with rewrite_result_free in every case. */
int classfile_rewrite(const uint8_t *in, size_t len, const struct rewrite_config *cfg,
                      struct rewrite_result *out, char *err, size_t errlen);

void rewrite_result_free(struct rewrite_result *r);

/* Classes the agent should not pass to classfile_rewrite at all (internal names, '/'-separated):
 *   hprof/...                      the tracker and anything else the agent defines: rewriting
 *                                  them would make the tracker call itself;
 *   java/lang/Object               its <init> runs for every allocation (an entry/exit pair per
 *                                  `new` would dwarf the real work), and the old hprof left it
 *                                  out too; it is loaded before any hook can see it anyway;
 *   jdk/internal/vm/Continuation   the virtual-thread mount/yield protocol: the VM enters and
 *   (and its nested classes)       leaves these frames through intrinsics (enterSpecial,
 *                                  doYield) and freezes/thaws them; extra calls there are not
 *                                  worth the risk.
 * Nothing else is needed for safety: the tracker itself calls only Thread.currentThread() and its
 * own natives (native methods are never rewritten), so no rewritten Java method runs inside it. */
bool rewriter_should_skip(const char *class_name);

#endif
