// The workload of tests/test_convert.py: CPU in a known method, int[] and String allocation
// through a few stack shapes, and two threads contending for one monitor.
import java.util.ArrayList;
import java.util.List;

public class Work {
    static final Object lock = new Object();
    static final List<Object> keep = new ArrayList<>();
    static long sink;

    static long spin(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) s += i * 31L ^ (s >>> 3);
        return s;
    }

    static int[] ints(int n) { return new int[n]; }
    static String text(int i) { return "item-" + i; }
    static void fill(int depth, int n) {
        if (depth > 0) { fill(depth - 1, n); return; }
        for (int i = 0; i < n; i++) { keep.add(ints(64)); keep.add(text(i)); }
    }

    public static void main(String[] a) throws Exception {
        for (int d = 0; d < 4; d++) fill(d, 500);
        Thread[] t = new Thread[2];
        for (int k = 0; k < 2; k++) {
            t[k] = new Thread(() -> {
                for (int j = 0; j < 40; j++) synchronized (lock) { sink += spin(300000); }
            });
            t[k].start();
        }
        for (Thread x : t) x.join();
        sink += spin(30000000);
        System.out.println(keep.size() + " " + (sink & 1));
    }
}
