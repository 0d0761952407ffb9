/* Benchmark workload: allocation-dense microbenchmark, the worst case for heap=sites.
 *
 *   java AllocDense <threads> <millions of iterations per thread>
 *
 * Each iteration allocates one to four small objects (about 1.8 on average) from a dozen
 * sites at different stack depths (records, boxed longs, small int and byte arrays, strings,
 * short lists, lambdas), and every 4096th iteration a 64 KiB byte array instead. Every
 * small object escapes into a ring of the last 16384, so the JIT cannot remove the allocation
 * and a small live set stays reachable; large arrays are never kept (anything that keeps them
 * alive longer is the profiler's doing, and shows in peak RSS). Prints one line
 *   result: threads=<t> iterations=<n> checksum=<hex>
 * which is the same in every run. */
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

public class AllocDense {
    record Point(long x, long y) {}

    static final class Node {
        final long value;
        final Node next;

        Node(long value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    static final int RING = 1 << 14;

    static Object point(long i) { return new Point(i, i * 3); }

    static Object boxed(long i) { return Long.valueOf(i * 1_000_003L); }

    static Object ints(long i) { return new int[1 + (int) (i & 15)]; }

    static Object bytes(long i) { return new byte[24 + (int) (i & 31)]; }

    static Object text(long i) { return "item-" + i; }

    static Object list(long i) {
        List<Long> l = new ArrayList<>(4);
        l.add(i);
        l.add(i + 1);
        return l;
    }

    static Object chain(long i) { return new Node(i, new Node(i + 1, new Node(i + 2, null))); }

    static Object lambda(long i) {
        LongSupplier s = () -> i * 7;
        return s;
    }

    static Object big(long i) { return new byte[64 * 1024]; }

    /** One level deeper, so sites differ in their stacks too. */
    static Object nested(long i) { return (i & 1) == 0 ? point(i) : chain(i); }

    static long weigh(Object o) {
        if (o instanceof Point p)
            return p.x() + p.y();
        if (o instanceof Long l)
            return l;
        if (o instanceof int[] a)
            return a.length;
        if (o instanceof byte[] b)
            return b.length;
        if (o instanceof String s)
            return s.length();
        if (o instanceof List<?> l)
            return l.size();
        if (o instanceof Node n)
            return n.value + n.next.value;
        if (o instanceof LongSupplier s)
            return s.getAsLong();
        return 1;
    }

    static long work(long n, int seed) {
        Object[] ring = new Object[RING];
        long sum = seed;
        for (long i = 0; i < n; i++) {
            Object o;
            if ((i & 4095) == 4095)
                o = big(i);
            else
                switch ((int) (i % 9)) {
                case 0 -> o = point(i);
                case 1 -> o = boxed(i);
                case 2 -> o = ints(i);
                case 3 -> o = bytes(i);
                case 4 -> o = text(i);
                case 5 -> o = list(i);
                case 6 -> o = chain(i);
                case 7 -> o = lambda(i);
                default -> o = nested(i);
                }
            int slot = (int) (i & (RING - 1));
            Object old = ring[slot];
            if (old != null)
                sum = sum * 31 + weigh(old);
            ring[slot] = (o instanceof byte[] b && b.length > 4096) ? null : o;
            if (o instanceof byte[] b && b.length > 4096)
                sum += b.length;
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long millions = args.length > 1 ? Long.parseLong(args[1]) : 20;
        long n = millions * 1_000_000L;
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> sums[id] = work(n, id), "alloc-" + t);
            ts[t].start();
        }
        long checksum = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            checksum = checksum * 1_000_003L + sums[t];
        }
        System.out.println("result: threads=" + threads + " iterations=" + n * threads + " checksum="
                           + Long.toHexString(checksum));
    }
}
