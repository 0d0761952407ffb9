/* cpu=samples accuracy against safepoint bias: the thread "leaf-loop" calls mix(), a long
 * straight-line arithmetic method (no loop, no call, no allocation: no safepoint poll inside),
 * from a counted loop. C2 inlines mix() into the loop, so nearly all the CPU time is spent in
 * mix()'s code, while the only polls are at the loop's back edge, in loop(). A sampler that
 * takes stacks at polls credits loop(); one that interrupts the thread where it runs credits
 * mix() (as an inlined frame above loop()).
 * Prints "leaf-cpu-ms N": the CPU time the thread used.
 * Usage: InlinedLeaf <milliseconds of the loop thread's CPU time> */
import java.lang.management.ManagementFactory;

public class InlinedLeaf {
    static volatile long sink;

    /* 64 dependent multiply-xorshift steps: about 200 cycles of straight-line code. */
    static long mix(long x) {
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; x ^= x >>> 31;
        x = x * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL; x ^= x >>> 29;
        return x;
    }

    static long loop(long n, long seed) {
        long acc = seed;
        for (long i = 0; i < n; i++)
            acc = mix(acc + i);
        return acc;
    }

    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        long[] cpu = new long[1];
        Thread t = new Thread(() -> {
            var mx = ManagementFactory.getThreadMXBean();
            // CPU time, not wall time: on a loaded machine a wall-time run got too few samples.
            long budget = millis * 1_000_000L, wallEnd = System.nanoTime() + 20 * budget;
            long acc = 0;
            while (mx.getCurrentThreadCpuTime() < budget && System.nanoTime() < wallEnd)
                acc += loop(1_000_000, acc);
            sink = acc;
            cpu[0] = mx.getCurrentThreadCpuTime();
        }, "leaf-loop");
        t.start();
        t.join();
        System.out.println("leaf-cpu-ms " + cpu[0] / 1_000_000);
    }
}
