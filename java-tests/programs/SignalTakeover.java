/* cpu=samples when the application takes SIGPROF over while the async sampler runs: the
 * thread "busy" computes for the whole run; after <takeover> ms the main thread installs its
 * own SIGPROF handler (sun.misc.Signal). The agent must notice, stop its timers and go on
 * with the safepoint sampler. Prints "busy-cpu-ms N" and "prof-signals N" (how many SIGPROF
 * the application's handler saw: signals from the agent's timers before it noticed).
 * Usage: SignalTakeover <milliseconds> <takeover-ms> */
import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;

public class SignalTakeover {
    static volatile long sink;

    static long work(long n) {
        long x = sink;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    @SuppressWarnings("removal")
    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        long takeover = Long.parseLong(args[1]);
        long[] cpu = new long[1];
        long end = System.nanoTime() + millis * 1_000_000L;
        Thread busy = new Thread(() -> {
            while (System.nanoTime() < end)
                sink += work(100_000);
            cpu[0] = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        }, "busy");
        busy.start();
        Thread.sleep(takeover);
        AtomicLong seen = new AtomicLong();
        sun.misc.Signal.handle(new sun.misc.Signal("PROF"), s -> seen.incrementAndGet());
        busy.join();
        System.out.println("busy-cpu-ms " + cpu[0] / 1_000_000);
        System.out.println("prof-signals " + seen.get());
    }
}
