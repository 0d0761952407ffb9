/* A lock-heavy workload for measuring monitor=y against no agent and against JFR.
 *
 *   java LockHeavy enter <threads> <millis> [<inside> <outside>]
 *                                             threads increment one shared counter inside
 *                                             synchronized, with <inside> steps of work
 *                                             (default 20, a few ns each) inside the lock
 *                                             and <outside> (default 20) outside, for
 *                                             about <millis> ms
 *   java LockHeavy yield <threads> <millis>   threads increment one shared counter and call
 *                                             Thread.yield() while holding the lock, so
 *                                             nearly every entry finds it owned and blocks
 *                                             (the most contended-monitor events per second)
 *   java LockHeavy wait <pairs> <millis>      pairs of threads hand a token back and forth
 *                                             with Object.wait / notify
 *
 * Runs a 1 s warm-up of the same kind first, then prints one line:
 *   mode=enter threads=4 ms=3000 ops=12345678 ops_per_ms=4115.2
 * Throughput (ops per ms) is the figure to compare; higher is better. */
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

public class LockHeavy {
    static final class Counter {
        long value;
    }

    static final class Token {
        boolean ping;
    }

    static volatile long sink;

    /** A few hundred nanoseconds of arithmetic the JIT cannot remove. */
    static long work(long x, int n) {
        for (int i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static long enter(int threads, long millis, int inside, int outside) throws InterruptedException {
        Counter counter = new Counter();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder ops = new LongAdder();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                long x = Thread.currentThread().getId(), n = 0;
                while (!stop.get()) {
                    synchronized (counter) {
                        counter.value++;
                        x = work(x, inside);
                    }
                    x = work(x, outside);
                    n++;
                }
                ops.add(n);
                sink = x;
            }, "enter-" + t);
            ts[t].start();
        }
        Thread.sleep(millis);
        stop.set(true);
        for (Thread t : ts)
            t.join();
        return ops.sum();
    }

    static long yielding(int threads, long millis) throws InterruptedException {
        Counter counter = new Counter();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder ops = new LongAdder();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                long n = 0;
                while (!stop.get()) {
                    synchronized (counter) {
                        counter.value++;
                        Thread.yield();
                    }
                    n++;
                }
                ops.add(n);
            }, "yield-" + t);
            ts[t].start();
        }
        Thread.sleep(millis);
        stop.set(true);
        for (Thread t : ts)
            t.join();
        return ops.sum();
    }

    static long handoff(int pairs, long millis) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder ops = new LongAdder();
        Thread[] ts = new Thread[pairs * 2];
        for (int p = 0; p < pairs; p++) {
            Token token = new Token();
            for (int side = 0; side < 2; side++) {
                boolean mine = side == 0;
                ts[p * 2 + side] = new Thread(() -> {
                    long n = 0;
                    try {
                        synchronized (token) {
                            while (!stop.get()) {
                                while (token.ping != mine && !stop.get())
                                    token.wait(10);
                                token.ping = !mine;
                                token.notify();
                                n++;
                            }
                            token.notifyAll();
                        }
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                    ops.add(n);
                }, "handoff-" + p + "-" + side);
            }
        }
        for (Thread t : ts)
            t.start();
        Thread.sleep(millis);
        stop.set(true);
        for (Thread t : ts)
            t.join();
        return ops.sum();
    }

    static int inside = 20, outside = 20;

    static long run(String mode, int n, long millis) throws InterruptedException {
        switch (mode) {
        case "enter":
            return enter(n, millis, inside, outside);
        case "yield":
            return yielding(n, millis);
        case "wait":
            return handoff(n, millis);
        default:
            throw new IllegalArgumentException("mode must be enter, yield or wait: " + mode);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "enter";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        long millis = args.length > 2 ? Long.parseLong(args[2]) : 3000;
        if (args.length > 4) {
            inside = Integer.parseInt(args[3]);
            outside = Integer.parseInt(args[4]);
        }
        run(mode, n, 1000); // warm-up
        long start = System.nanoTime();
        long ops = run(mode, n, millis);
        double ms = (System.nanoTime() - start) / 1e6;
        System.out.printf("mode=%s threads=%d ms=%.0f ops=%d ops_per_ms=%.1f%n", mode, n, ms, ops, ops / ms);
    }
}
