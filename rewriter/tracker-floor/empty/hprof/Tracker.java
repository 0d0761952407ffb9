/*
 * A stand-in tracker for measuring what cpu=times cannot avoid (bench/cpu-times-floor.sh): the
 * rewritten code alone. Both probes are empty Java methods, which the JIT inlines to nothing.
 * Selected by HPROF_CPU_TIMES_PROBE=java-empty; counts nothing. See doc/cpu-times.md, "The floor".
 */
package hprof;

public final class Tracker {
    private Tracker() {
    }

    public static void methodEntry(int cnum, int mnum) {
    }

    public static void methodExit(int cnum, int mnum) {
    }
}
