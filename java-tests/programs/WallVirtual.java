/* wall=y and virtual threads (JDK 21+; compiled with --release 17, so virtual threads are made
 * through reflection). N virtual threads "vsleep-i" sleep and N "vpark-i" park in short naps
 * until a common deadline; one virtual thread "vcompute" computes until then. Each measures its
 * own life in run(); main prints the sum of those lives and the sum of the brackets from its
 * start() call to its join() return, in ms.
 * Usage: WallVirtual <n> <ms> */
import java.util.concurrent.locks.LockSupport;

public class WallVirtual {
    static volatile long sink;

    static void compute(long deadline) {
        long x = 1;
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 10000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
                x ^= x >>> 29;
            }
        }
        sink = x;
    }

    static Thread startVirtual(String name, Runnable r) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> api = Class.forName("java.lang.Thread$Builder");
        builder = api.getMethod("name", String.class).invoke(builder, name);
        return (Thread) api.getMethod("start", Runnable.class).invoke(builder, r);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long deadline = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000L;
        int total = 2 * n + 1;
        Thread[] ts = new Thread[total];
        long[] life = new long[total], called = new long[total];
        for (int i = 0; i < total; i++) {
            final int k = i;
            Runnable body;
            if (i == 0)
                body = () -> compute(deadline);
            else if (i <= n)
                body = () -> {
                    while (System.nanoTime() < deadline)
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            return;
                        }
                };
            else
                body = () -> {
                    while (System.nanoTime() < deadline)
                        LockSupport.parkNanos(50_000_000L);
                };
            String name = i == 0 ? "vcompute" : i <= n ? "vsleep-" + i : "vpark-" + (i - n);
            called[i] = System.nanoTime();
            ts[i] = startVirtual(name, () -> {
                long t0 = System.nanoTime();
                body.run();
                life[k] = System.nanoTime() - t0;
            });
        }
        long lives = 0, brackets = 0;
        for (int i = 0; i < total; i++) {
            ts[i].join();
            brackets += System.nanoTime() - called[i];
            lives += life[i];
        }
        System.out.println("virtual-lives-ms " + lives / 1_000_000L + " brackets-ms " + brackets / 1_000_000L);
    }
}
