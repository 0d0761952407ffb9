/* Allocation-dense microbenchmark for heap=sites (bench/sites-overhead.sh): per iteration a
 * 4-node linked list, a small int[], a string from concatenation, a boxed Integer and an
 * ArrayList holding two of them; one in 64 lists is kept in a ring, the rest die young.
 * About 10 allocations per iteration. Argument: iterations (default 2,000,000). */
import java.util.ArrayList;

public class AllocBench {
    static final class Node {
        Node next;
        int v;

        Node(int v, Node n) {
            this.v = v;
            this.next = n;
        }
    }

    static Object[] ring = new Object[4096];
    static long sink;

    static Node list(int n) {
        Node h = null;
        for (int i = 0; i < n; i++)
            h = new Node(i, h);
        return h;
    }

    static int[] arr(int n) { return new int[n]; }

    static String str(int i) { return "k" + i; }

    public static void main(String[] a) {
        long iters = a.length > 0 ? Long.parseLong(a[0]) : 2_000_000;
        long t0 = System.nanoTime();
        for (long i = 0; i < iters; i++) {
            Node n = list(4);
            int[] x = arr((int) (i & 15));
            String s = str((int) i);
            Integer b = Integer.valueOf((int) i + 1000);
            ArrayList<Object> l = new ArrayList<>(2);
            l.add(s);
            l.add(b);
            sink += n.v + x.length + s.length() + l.size();
            if ((i & 63) == 0)
                ring[(int) ((i >> 6) & 4095)] = l;
        }
        System.out.println("ms " + (System.nanoTime() - t0) / 1_000_000 + " sink " + sink);
    }
}
