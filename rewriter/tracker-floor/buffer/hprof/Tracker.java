/*
 * A stand-in tracker for measuring what cpu=times cannot avoid (bench/cpu-times-floor.sh): a
 * tracker in Java that records each event in its own thread's buffer, without a clock and
 * without processing the events. The thread's buffer is found from Thread.currentThread()
 * through a table indexed by its identity hash (System.identityHashCode is native and an
 * intrinsic: no rewritten code runs here). Collisions just take the slot over: the events are
 * never read. Selected by HPROF_CPU_TIMES_PROBE=java-buffer; counts nothing. See
 * doc/cpu-times.md, "The floor".
 */
package hprof;

public final class Tracker {
    private Tracker() {
    }

    private static final int SLOTS = 1024;
    private static final int LEN = 4096;
    /** Per slot: [0] the owner's identity hash, [1] the next free index, events from [2]. */
    private static final long[][] BUFFERS = new long[SLOTS][];

    public static void methodEntry(int cnum, int mnum) {
        record(((long) cnum << 32) | mnum);
    }

    public static void methodExit(int cnum, int mnum) {
        record(((long) cnum << 32) | mnum | 0x80000000L);
    }

    private static void record(long event) {
        int id = System.identityHashCode(Thread.currentThread());
        long[] b = BUFFERS[id & (SLOTS - 1)];
        if (b == null || b[0] != id) {
            b = new long[LEN];
            b[0] = id;
            b[1] = 2;
            BUFFERS[id & (SLOTS - 1)] = b;
        }
        int n = (int) b[1];
        if (n == LEN)
            n = 2; /* where a real tracker would hand the full buffer over */
        b[n] = event;
        b[1] = n + 1;
    }
}
