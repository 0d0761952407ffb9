/*
 * The tracker that methods rewritten for cpu=times / cpu=old call at entry and exit.
 *
 * libhprof.so embeds this class's bytes and defines it in the bootstrap class loader (package
 * "hprof", so it lives in the boot loader's unnamed module), which every class loader that
 * delegates to its parent can see. It must stay tiny and self-contained:
 *
 *  - It calls nothing but Thread.currentThread() (a native method, so never rewritten) and its own
 *    native methods: no rewritten Java code runs inside the tracker, so it cannot recurse.
 *  - It has no static initializer: initializing it runs no Java code.
 *  - Nothing happens until the agent sets {@code engaged} to 1, after it has registered the native
 *    methods with RegisterNatives (an unregistered native would be looked up through
 *    ClassLoader.findNative, which is Java code that may itself be rewritten).
 *
 * The agent finds the natives by these names and descriptors:
 *   nativeEntry (Ljava/lang/Thread;II)V     nativeExit (Ljava/lang/Thread;II)V
 * and the flag as the static int field "engaged".
 */
package hprof;

public final class Tracker {
    private Tracker() {
    }

    /** 0 until the agent is ready; set and cleared by the agent only (JNI SetStaticIntField). */
    private static volatile int engaged;

    private static native void nativeEntry(Thread thread, int cnum, int mnum);

    private static native void nativeExit(Thread thread, int cnum, int mnum);

    /** Called first thing in every rewritten method. */
    public static void methodEntry(int cnum, int mnum) {
        if (engaged != 0) {
            nativeEntry(Thread.currentThread(), cnum, mnum);
        }
    }

    /** Called before every return of a rewritten method, and when an exception leaves it. */
    public static void methodExit(int cnum, int mnum) {
        if (engaged != 0) {
            nativeExit(Thread.currentThread(), cnum, mnum);
        }
    }
}
