import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/* The soak workload (bench/soak/soak.sh): RATE new classes a second for NEW_SECONDS, then
 * QUIET_SECONDS with no new code (the same work on the last classes), printing the process's
 * RSS every 10 s. Each class is a copy of SoakT_ZZZZZZZZ under a name of its own, defined by a
 * fresh class loader every 5 classes; only the last 20 classes are kept, so older loaders and
 * their classes can be unloaded. Three worker threads run the live classes; System.gc() every
 * 30 s.  java -cp <dir> Soak <new_seconds> <quiet_seconds> */
public final class Soak {
    static final int RATE = 10, PER_LOADER = 5, LIVE = 20, WORKERS = 3;
    static final Runnable[] live = new Runnable[LIVE];
    static volatile boolean done;

    static final class Loader extends ClassLoader {
        Loader() {
            super(Soak.class.getClassLoader());
        }

        Class<?> define(String name, byte[] b) {
            return defineClass(name, b, 0, b.length);
        }
    }

    static byte[] template() throws Exception {
        try (InputStream in = Soak.class.getResourceAsStream("/SoakT_ZZZZZZZZ.class")) {
            return in.readAllBytes();
        }
    }

    /* The template with every ZZZZZZZZ (only in names: class, methods, source file) replaced. */
    static byte[] copy(byte[] tpl, int n) {
        byte[] b = tpl.clone();
        byte[] hex = String.format("%08x", n).getBytes();
        for (int i = 0; i + 8 <= b.length; i++) {
            boolean match = true;
            for (int j = 0; j < 8 && match; j++)
                match = b[i + j] == 'Z';
            if (match)
                System.arraycopy(hex, 0, b, i, 8);
        }
        return b;
    }

    static long rssKb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status")))
                if (line.startsWith("VmRSS:"))
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
        } catch (Exception e) {
            // fall through
        }
        return -1;
    }

    static void work() {
        int i = 0;
        while (!done) {
            for (int k = 0; k < 50; k++) {
                Runnable r = live[(i++ * 7) % LIVE];
                if (r != null)
                    r.run();
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int newSeconds = Integer.parseInt(args[0]);
        int quietSeconds = Integer.parseInt(args[1]);
        byte[] tpl = template();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            Thread t = new Thread(Soak::work, "soak-worker-" + w);
            t.start();
            workers.add(t);
        }
        long start = System.nanoTime();
        long nextPrint = 0, nextGc = 30;
        int made = 0;
        Loader loader = null;
        var loading = ManagementFactory.getClassLoadingMXBean();
        for (int tick = 0;; tick++) {
            long ms = tick * 1000L / RATE;
            long sleep = ms - (System.nanoTime() - start) / 1_000_000;
            if (sleep > 0)
                Thread.sleep(sleep);
            long s = ms / 1000;
            if (ms % 1000 == 0 && s >= nextPrint) {
                System.out.printf("t=%d rss_kb=%d made=%d loaded=%d unloaded=%d%n", s, rssKb(),
                                  made, loading.getLoadedClassCount(),
                                  loading.getUnloadedClassCount());
                nextPrint = s + 10;
            }
            if (s >= nextGc) {
                System.gc();
                nextGc = s + 30;
            }
            if (s >= newSeconds + quietSeconds)
                break;
            if (s < newSeconds) {
                if (made % PER_LOADER == 0)
                    loader = new Loader();
                String name = String.format("SoakT_%08x", made);
                Class<?> c = loader.define(name, copy(tpl, made));
                live[made % LIVE] = (Runnable) c.getDeclaredConstructor().newInstance();
                made++;
            }
        }
        done = true;
        for (Thread t : workers)
            t.join();
    }
}
