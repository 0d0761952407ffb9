/*
 * A stand-in tracker for measuring what cpu=times cannot avoid (bench/cpu-times-floor.sh): the
 * least a tracker written in Java must do to record an event, a store of the method's numbers
 * into memory, with no clock, no lookup of the thread's own buffer and no processing. All threads
 * share one ring (racy on purpose: it is never read). Selected by HPROF_CPU_TIMES_PROBE=java-store;
 * counts nothing. See doc/cpu-times.md, "The floor".
 */
package hprof;

public final class Tracker {
    private Tracker() {
    }

    private static final int MASK = (1 << 16) - 1;
    private static final long[] RING = new long[MASK + 1];
    private static int next;

    public static void methodEntry(int cnum, int mnum) {
        int n = next;
        RING[n & MASK] = ((long) cnum << 32) | mnum;
        next = n + 1;
    }

    public static void methodExit(int cnum, int mnum) {
        int n = next;
        RING[n & MASK] = ((long) cnum << 32) | mnum | 0x80000000L;
        next = n + 1;
    }
}
