import java.lang.management.ManagementFactory;
import java.util.concurrent.locks.LockSupport;

/**
 * wall=y's cost benchmark: IDLE threads that wait (parked, sleeping in long sleeps, in
 * Object.wait, a third each) plus BUSY threads that compute for MILLIS ms. Prints the work done
 * (iterations of the busy loop), the process CPU time and "cpu-ns-per-kiter": process CPU per
 * thousand iterations, the figure compared with and without the agent (the agent's sampler CPU
 * and what it costs the busy threads both raise it).
 *
 *   java WallIdle IDLE BUSY MILLIS
 */
public class WallIdle {
    static volatile boolean stop, measuring;
    static final Object MONITOR = new Object();

    public static void main(String[] args) throws Exception {
        int idle = Integer.parseInt(args[0]), busy = Integer.parseInt(args[1]);
        long millis = Long.parseLong(args[2]);
        for (int i = 0; i < idle; i++) {
            int kind = i % 3;
            Thread t = new Thread(() -> {
                while (!stop) {
                    if (kind == 0) {
                        LockSupport.parkNanos(60_000_000_000L);
                    } else if (kind == 1) {
                        try {
                            Thread.sleep(60_000);
                        } catch (InterruptedException e) {
                            return;
                        }
                    } else {
                        synchronized (MONITOR) {
                            try {
                                MONITOR.wait(60_000);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    }
                }
            }, "idle-" + i);
            t.setDaemon(true);
            t.start();
        }
        long[] iters = new long[busy];
        Thread[] workers = new Thread[busy];
        for (int i = 0; i < busy; i++) {
            int me = i;
            workers[i] = new Thread(() -> {
                long x = me, n = 0, first = -1;
                while (!stop) {
                    for (int k = 0; k < 1000; k++)
                        x = x * 6364136223846793005L + 1442695040888963407L;
                    n++;
                    if (first < 0 && measuring)
                        first = n;
                }
                iters[me] = n - Math.max(first, 0) + (x == 42 ? 1 : 0);
            }, "busy-" + i);
            workers[i].start();
        }
        Thread.sleep(1000); // start-up, JIT: not measured
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        measuring = true;
        Thread.sleep(millis);
        stop = true;
        for (Thread w : workers)
            w.join();
        long cpu = os.getProcessCpuTime() - cpu0;
        long total = 0;
        for (long n : iters)
            total += n;
        System.out.printf("iterations %d process-cpu-ms %d cpu-ns-per-kiter %.1f%n", total, cpu / 1_000_000,
                total > 0 ? (double) cpu / total * 1000 : 0.0);
    }
}
