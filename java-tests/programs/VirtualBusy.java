/* cpu=samples and virtual threads (JDK 21+; compiled with --release 17, so virtual threads are
 * made through reflection). The virtual thread "vbusy" runs vthreadWork for twice the
 * iterations the platform thread "pbusy" runs platformWork (the same loop), both at once, while
 * main waits in join; the virtual thread "vpark" parks for the whole run, "vsleep" sleeps, and
 * "vpingpong" parks and is unparked over and over (mount and unmount churn, little CPU).
 * Usage: VirtualBusy <units> (one unit: 1,000,000 iterations of the platform loop)
 *        VirtualBusy churn <n> [threads]: only park/unpark n times between virtual threads
 *        (a measurement of the mount and unmount cost), prints "churn-ms N". */
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

public class VirtualBusy {
    static volatile long sink;

    static long vthreadWork(long n) {
        long x = sink;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static long platformWork(long n) {
        long x = sink;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    /** Thread.ofVirtual().name(name).start(r), named from the start. */
    static Thread startVirtual(String name, Runnable r) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> api = Class.forName("java.lang.Thread$Builder");
        builder = api.getMethod("name", String.class).invoke(builder, name);
        return (Thread) api.getMethod("start", Runnable.class).invoke(builder, r);
    }

    static void churn(long n, int threads) throws Exception {
        // Pairs of virtual threads handing a token back and forth: every hand-over is one park
        // and one unpark, so about one unmount and one mount.
        Thread[] ts = new Thread[threads * 2];
        CountDownLatch done = new CountDownLatch(threads);
        long per = n / threads;
        long t0 = System.nanoTime();
        for (int p = 0; p < threads; p++) {
            AtomicBoolean turnA = new AtomicBoolean(true);
            Thread[] pair = new Thread[2];
            for (int side = 0; side < 2; side++) {
                boolean mine = side == 0;
                int s = side;
                pair[side] = startVirtual("churn", () -> {
                    while (pair[0] == null || pair[1] == null)
                        Thread.onSpinWait();
                    Thread other = pair[1 - s];
                    for (long i = 0; i < per / 2; i++) {
                        while (turnA.get() != mine)
                            LockSupport.park();
                        turnA.set(!mine);
                        LockSupport.unpark(other);
                    }
                    if (s == 0)
                        done.countDown();
                });
            }
            ts[2 * p] = pair[0];
            ts[2 * p + 1] = pair[1];
        }
        for (Thread t : ts)
            t.join();
        System.out.println("churn-ms " + (System.nanoTime() - t0) / 1_000_000);
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("churn")) {
            churn(Long.parseLong(args[1]), args.length > 2 ? Integer.parseInt(args[2]) : 1);
            return;
        }
        long units = Long.parseLong(args[0]);
        Thread vpark = startVirtual("vpark", () -> {
            while (true)
                LockSupport.park();
        });
        Thread vsleep = startVirtual("vsleep", () -> {
            try {
                Thread.sleep(3_600_000);
            } catch (InterruptedException e) {
                // at exit
            }
        });
        AtomicBoolean stop = new AtomicBoolean();
        Thread vping = startVirtual("vpingpong", () -> {
            while (!stop.get()) {
                LockSupport.parkNanos(200_000);
            }
        });
        Thread vbusy = startVirtual("vbusy", () -> {
            for (long u = 0; u < 2 * units; u++)
                sink += vthreadWork(1_000_000);
        });
        Thread pbusy = new Thread(() -> {
            for (long u = 0; u < units; u++)
                sink += platformWork(1_000_000);
        }, "pbusy");
        pbusy.start();
        System.out.println("virtual-busy ready");
        System.out.flush();
        vbusy.join();
        pbusy.join();
        stop.set(true);
        vping.join();
        System.out.println("virtual-busy done " + vpark.isAlive() + " " + vsleep.isAlive());
    }
}
