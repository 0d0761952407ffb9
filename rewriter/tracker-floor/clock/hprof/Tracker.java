/*
 * A stand-in tracker for measuring what cpu=times cannot avoid (bench/cpu-times-floor.sh): the
 * cheapest clock Java code can read, once per probe, with nothing else. System.nanoTime() is
 * what a tracker written in Java would have to call to time a method (no JNI transition, but a
 * call out of the compiled code into the VM's clock). Selected by
 * HPROF_CPU_TIMES_PROBE=java-clock; counts nothing. See doc/cpu-times.md, "The floor".
 */
package hprof;

public final class Tracker {
    private Tracker() {
    }

    /** Keeps the clock readings alive so the JIT cannot drop them (racy on purpose: unread). */
    private static long sink;

    public static void methodEntry(int cnum, int mnum) {
        sink += System.nanoTime();
    }

    public static void methodExit(int cnum, int mnum) {
        sink += System.nanoTime();
    }
}
