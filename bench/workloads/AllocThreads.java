/* Benchmark workload for heap=sites on many threads (bench/sites-threads.sh).
 *
 *   java AllocThreads alloc <threads> <iterations in thousands, in all>
 *   java AllocThreads load <threads> <seconds>
 *
 * alloc: <threads> threads share a fixed number of iterations (each does its share); every
 * iteration allocates exactly 6 objects from 4 sites (a 3-node list, a small int[], a Point,
 * a long[]), each one kept in the thread's ring of the last 4096 so the JIT cannot remove it.
 * The threads start together after a warm-up; prints
 *   result: mode=alloc threads=<t> allocations=<n> cpu_ms=<c> wall_ms=<w> cpu_ns_per_alloc=<x>
 * with cpu the process's CPU time (all threads: GC, JIT, the VM's service threads, the agent)
 * over the allocating phase only, so the JVM's start-up and the agent's exit dump are left out.
 *
 * load: <threads> threads allocate as above without end while the main thread, for <seconds>,
 * defines classes (the same small class's bytes in a fresh class loader each time, then one
 * call into it) and counts them; prints
 *   result: mode=load threads=<t> classes=<n> seconds=<s> classes_per_s=<r> allocations=<a>
 *           main_cpu_us_per_class=<u>
 * (u: the loading thread's own CPU time per class, which the rate divides by the share of the
 * two cores the scheduler gives that thread among the allocating ones).
 */
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

public class AllocThreads {
    record Point(long x, long y) {}

    static final class Node {
        final long value;
        final Node next;

        Node(long value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    static final int RING = 1 << 12;
    static final int PER_ITERATION = 6;

    static Object chain(long i) { return new Node(i, new Node(i + 1, new Node(i + 2, null))); }

    static Object ints(long i) { return new int[1 + (int) (i & 7)]; }

    static Object point(long i) { return new Point(i, i * 3); }

    static Object longs(long i) { return new long[2 + (int) (i & 3)]; }

    /** Returns a checksum so the work cannot be dropped. */
    static long work(long n, Object[] ring, long seed) {
        long sum = seed;
        int slot = 0;
        for (long i = 0; i < n; i++) {
            Object a = chain(i), b = ints(i), c = point(i), d = longs(i);
            sum += ((Node) a).value + ((int[]) b).length + ((Point) c).y() + ((long[]) d).length;
            ring[slot] = a;
            ring[slot + 1] = b;
            ring[slot + 2] = c;
            ring[slot + 3] = d;
            slot = (slot + 4) & (RING - 1);
        }
        return sum;
    }

    static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    static void alloc(int threads, long iterations) throws Exception {
        long share = iterations / threads;
        long[] sums = new long[threads];
        CountDownLatch ready = new CountDownLatch(threads), go = new CountDownLatch(1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> {
                Object[] ring = new Object[RING];
                work(2000, ring, id); /* warm-up: the class and the first TLABs */
                ready.countDown();
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                sums[id] = work(share, ring, id);
            }, "alloc-" + t);
            ts[t].start();
        }
        ready.await();
        long cpu0 = processCpuNs(), wall0 = System.nanoTime();
        go.countDown();
        long checksum = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            checksum += sums[t];
        }
        long cpu = processCpuNs() - cpu0, wall = System.nanoTime() - wall0;
        long allocations = share * threads * PER_ITERATION;
        System.out.printf("result: mode=alloc threads=%d allocations=%d cpu_ms=%d wall_ms=%d "
                              + "cpu_ns_per_alloc=%.1f checksum=%x%n",
                          threads, allocations, cpu / 1_000_000, wall / 1_000_000,
                          (double) cpu / allocations, checksum);
    }

    /** The class the load mode defines again and again. */
    public static final class Loaded {
        public static int make(int n) {
            int[] a = new int[n];
            return a.length + 1;
        }
    }

    static final class OneClassLoader extends ClassLoader {
        private final byte[] bytes;

        OneClassLoader(byte[] bytes) {
            super(null);
            this.bytes = bytes;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (!name.equals("AllocThreads$Loaded"))
                throw new ClassNotFoundException(name);
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    static void load(int threads, double seconds) throws Exception {
        byte[] bytes;
        try (InputStream in = AllocThreads.class.getResourceAsStream("AllocThreads$Loaded.class")) {
            bytes = in.readAllBytes();
        }
        AtomicLong done = new AtomicLong();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                Object[] ring = new Object[RING];
                for (;;) {
                    work(10_000, ring, id);
                    done.addAndGet(10_000);
                }
            }, "alloc-" + t);
            th.setDaemon(true);
            th.start();
        }
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        long end = System.nanoTime() + (long) (seconds * 1e9), t0 = System.nanoTime();
        long classes = 0, check = 0;
        while (System.nanoTime() < end) {
            Class<?> c = new OneClassLoader(bytes).loadClass("AllocThreads$Loaded");
            Method m = c.getMethod("make", int.class);
            check += (Integer) m.invoke(null, 3);
            classes++;
        }
        double s = (System.nanoTime() - t0) / 1e9;
        double mainUs = (mx.getCurrentThreadCpuTime() - cpu0) / 1e3 / Math.max(1, classes);
        System.out.printf("result: mode=load threads=%d classes=%d seconds=%.1f classes_per_s=%.1f "
                              + "allocations=%d check=%d main_cpu_us_per_class=%.1f%n",
                          threads, classes, s, classes / s, done.get() * PER_ITERATION, check, mainUs);
        System.out.flush();
        Runtime.getRuntime().halt(0); /* the allocating threads never end; no exit dump either */
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "alloc";
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        if (mode.equals("load"))
            load(threads, args.length > 2 ? Double.parseDouble(args[2]) : 10);
        else
            alloc(threads, (args.length > 2 ? Long.parseLong(args[2]) : 1000) * 1000);
    }
}
