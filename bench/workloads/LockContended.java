/* Benchmark workload: a fixed amount of contended synchronized work, for monitor=y. (The
 * monitor profile's own bench/workloads/LockHeavy.java runs for a fixed time and reports a
 * throughput; this one does a fixed number of operations, so its wall time is comparable.)
 *
 *   java LockContended <threads> <thousands of operations per thread>
 *
 * <threads> threads each do the given number of increments of one shared counter inside
 * synchronized, with a little arithmetic inside and outside the lock; every 16th increment
 * calls Thread.yield() while holding the lock, so other threads really block (HotSpot spins
 * before blocking, and short critical sections are mostly won by spinning: without the yield
 * there would be almost no contended-entry events). A pair of threads also hands a token
 * back and forth with wait/notify, one hundredth as many times. Prints one line
 *   result: threads=<t> increments=<n> handoffs=<h>
 * which is the same in every run. */
public class LockContended {
    static final class Counter {
        long value;
    }

    static final class Token {
        boolean ping;
        long passes;
    }

    static volatile long sink;

    static long work(long x, int n) {
        for (int i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static void increments(Counter counter, long ops) {
        long x = Thread.currentThread().getName().hashCode();
        for (long i = 0; i < ops; i++) {
            synchronized (counter) {
                counter.value++;
                x = work(x, 8);
                if ((i & 15) == 0)
                    Thread.yield();
            }
            x = work(x, 16);
        }
        sink = x;
    }

    static void handoff(Token token, boolean mine, long passes) {
        try {
            synchronized (token) {
                for (long n = 0; n < passes; n++) {
                    while (token.ping != mine)
                        token.wait();
                    token.ping = !mine;
                    token.passes++;
                    token.notify();
                }
            }
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        long ops = (args.length > 1 ? Long.parseLong(args[1]) : 2000) * 1000;
        long passes = ops / 100;
        Counter counter = new Counter();
        Token token = new Token();
        Thread[] ts = new Thread[threads + 2];
        for (int t = 0; t < threads; t++)
            ts[t] = new Thread(() -> increments(counter, ops), "increment-" + t);
        ts[threads] = new Thread(() -> handoff(token, false, passes), "ping");
        ts[threads + 1] = new Thread(() -> handoff(token, true, passes), "pong");
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        System.out.println("result: threads=" + threads + " increments=" + counter.value + " handoffs=" + token.passes);
    }
}
