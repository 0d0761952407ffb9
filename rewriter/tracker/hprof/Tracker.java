/*
 * The tracker that methods rewritten for cpu=times / cpu=old call at entry and exit.
 *
 * libhprof.so embeds this class's bytes and defines it in the bootstrap class loader (package
 * "hprof", so it lives in the boot loader's unnamed module), which every class loader that
 * delegates to its parent can see.
 *
 * Both entry points are native methods that the agent registers (RegisterNatives) before any
 * rewritten code exists: a rewritten method calls straight into the agent's C code, and no Java
 * code runs inside the tracker, so it cannot recurse into rewritten code. (An unregistered
 * native would be looked up through ClassLoader.findNative, Java code that may itself be
 * rewritten: the agent rewrites nothing before the natives are registered.) Native methods are
 * never inlined Java code, so the JIT compiles each rewritten method with two plain native calls
 * added, not with a tracker method inlined at its entry and at every exit.
 *
 * The agent finds the natives by these names and descriptors:
 *   methodEntry (II)V     methodExit (II)V
 * and stops counting at VM death on its side.
 */
package hprof;

public final class Tracker {
    private Tracker() {
    }

    /** Called first thing in every rewritten method: its class and method numbers. */
    public static native void methodEntry(int cnum, int mnum);

    /** Called before every return of a rewritten method, and when an exception leaves it. */
    public static native void methodExit(int cnum, int mnum);
}
