/* cpu=samples with many threads: 200 live threads (sleeping, parked, waiting and a few
 * working now and then) while a starter thread keeps starting short-lived threads that work
 * about a millisecond and end. Ends with System.exit while all of them still run, so the
 * sampler is stopped at VM death in the middle of it all. Each short thread works about 1 ms
 * (1e6 iterations), so most of the CPU time is in work().
 * Usage: ThreadChurn <milliseconds>; prints "churn started N". */
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class ThreadChurn {
    static volatile long sink;
    static final Object lock = new Object();

    static long work(long n) {
        long x = sink;
        for (long i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        List<Thread> live = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            final int kind = i % 4;
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        switch (kind) {
                            case 0 -> Thread.sleep(20);
                            case 1 -> LockSupport.parkNanos(20_000_000L);
                            case 2 -> {
                                synchronized (lock) {
                                    lock.wait(20);
                                }
                            }
                            default -> {
                                sink += work(20_000);
                                Thread.sleep(5);
                            }
                        }
                    }
                } catch (InterruptedException e) {
                    // exit
                }
            }, "live-" + i);
            t.setDaemon(true);
            t.start();
            live.add(t);
        }
        AtomicLong started = new AtomicLong();
        long end = System.nanoTime() + millis * 1_000_000L;
        Thread starter = new Thread(() -> {
            while (System.nanoTime() < end) {
                Thread s = new Thread(() -> sink += work(1_000_000), "short-" + started.get());
                s.setDaemon(true);
                s.start();
                started.incrementAndGet();
                LockSupport.parkNanos(1_000_000L); // at most about one thread per ms
            }
        }, "starter");
        starter.start();
        starter.join();
        System.out.println("churn started " + started.get());
        System.out.flush();
        System.exit(0);
    }
}
