/* cpu=samples on time spent in the VM on a Java method's behalf: fill() allocates large long[]
 * arrays in a loop, so nearly all of its thread's CPU time goes to the VM zeroing them (the
 * allocation leaves compiled code for a runtime call; the thread is in the VM, not in Java).
 * AsyncGetCallTrace cannot walk a thread there (its last Java frame has no recorded pc), so
 * without a late walk these samples are unwalkable; with it they belong to fill().
 * Usage: ZeroedArrays <milliseconds> [array length] */
public class ZeroedArrays {
    static Object sink;

    static long fill(int length, int count) {
        long sum = 0;
        for (int i = 0; i < count; i++) {
            long[] a = new long[length];
            a[i % length] = i;
            sum += a.length;
            sink = a;
        }
        return sum;
    }

    public static void main(String[] args) {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000L;
        int length = args.length > 1 ? Integer.parseInt(args[1]) : 1 << 18;
        long sum = 0;
        while (System.nanoTime() < end)
            sum += fill(length, 100);
        System.out.println("filled " + sum);
    }
}
