/* Monitor contention with known times, for monitor=y. Four threads take turns on one
 * Turnstile: each holds it 50 ms, five rounds. One more thread waits 300 ms on a Signal
 * (Object.wait with a timeout nobody cuts short). Every thread measures how long it was
 * blocked before it got the Turnstile; the program prints the sums so a test can compare the
 * agent's MONITOR TIME with what really happened:
 *   blocked_ms=<sum over all entries, ms, 3 decimals>
 *   signal_waited_ms=<ms the Signal wait took>
 * With the argument "virtual" (JDK 21+) the four contenders are virtual threads. */
import java.lang.reflect.Method;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

public class MonitorContention {
    static final class Turnstile {}
    static final class Signal {}

    static final Turnstile TURNSTILE = new Turnstile();
    static final Signal SIGNAL = new Signal();
    static final int THREADS = 4, ROUNDS = 5, HOLD_MS = 50, WAIT_MS = 300;
    static final AtomicLong blockedNs = new AtomicLong();
    static final Map<String, Long> blockedByThread = new TreeMap<>();
    static final CountDownLatch go = new CountDownLatch(1);

    static void contend() throws InterruptedException {
        long mine = 0;
        for (int round = 0; round < ROUNDS; round++) {
            long before = System.nanoTime();
            synchronized (TURNSTILE) { // CONTENDED HERE
                mine += System.nanoTime() - before;
                Thread.sleep(HOLD_MS);
            }
            Thread.sleep(2); // let the others in: take turns
        }
        blockedNs.addAndGet(mine);
        synchronized (blockedByThread) {
            blockedByThread.put(Thread.currentThread().getName(), mine);
        }
    }

    static void awaitSignal() throws InterruptedException {
        synchronized (SIGNAL) {
            long before = System.nanoTime();
            SIGNAL.wait(WAIT_MS); // WAITS HERE
            System.out.printf("signal_waited_ms=%d%n", (System.nanoTime() - before) / 1_000_000);
        }
    }

    static Runnable contender() {
        return () -> {
            try {
                go.await();
                contend();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        };
    }

    static Thread start(boolean virtual, String name, Runnable r) throws Exception {
        if (!virtual) {
            Thread t = new Thread(r, name);
            t.start();
            return t;
        }
        // Thread.ofVirtual().name(name).start(r), by reflection: compiled with --release 17.
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method nameM = Class.forName("java.lang.Thread$Builder").getMethod("name", String.class);
        builder = nameM.invoke(builder, name);
        Method startM = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        return (Thread) startM.invoke(builder, r);
    }

    public static void main(String[] args) throws Exception {
        boolean virtual = args.length > 0 && args[0].equals("virtual");
        Thread[] threads = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++)
            threads[i] = start(virtual, "contender-" + i, contender());
        Thread waiter = start(virtual, "signal-waiter", () -> {
            try {
                awaitSignal();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        go.countDown();
        for (Thread t : threads)
            t.join();
        waiter.join();
        for (Map.Entry<String, Long> e : blockedByThread.entrySet())
            System.out.printf("blocked_ms[%s]=%.3f%n", e.getKey(), e.getValue() / 1e6);
        System.out.printf("blocked_ms=%.3f%n", blockedNs.get() / 1e6);
        System.out.println("contention done");
    }
}
