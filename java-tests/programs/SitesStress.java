/* 16 threads allocate known counts while the main thread loads SitesLoaded in 40 throw-away
 * class loaders, allocates 50 of its objects each time, drops everything and collects, so
 * classes unload under the allocating threads (HeapSitesTest). Each thread first allocates a
 * few Blobs in start() (the class's first, default site), then many in churn(), so the agent
 * moves Blob's default site while all threads allocate. Argument: the directory of
 * SitesLoaded.class. */
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;

public class SitesStress {
    static final int THREADS = 16, BLOBS = 20_000, BLOBS_KEPT = 100, LOADERS = 40, LOADED = 50;
    static final int FIRST = 10, FIRST_KEPT = 5;

    static class Blob {
        int[] small = null;
        long v;
    }

    static volatile Object sink;
    static final Object[][] kept = new Object[THREADS][BLOBS_KEPT + FIRST_KEPT];

    static void start(int t) {
        for (int i = 0; i < FIRST; i++) {
            Blob b = new Blob();
            sink = b;
            if (i < FIRST_KEPT)
                kept[t][BLOBS_KEPT + i] = b;
        }
    }

    static void churn(int t) {
        for (int i = 0; i < BLOBS; i++) {
            Blob b = new Blob();
            sink = b;
            if (i < BLOBS_KEPT)
                kept[t][i] = b;
            if (i % 2000 == 0)
                Thread.yield();
        }
    }

    static final class OneClassLoader extends ClassLoader {
        private final byte[] bytes;

        OneClassLoader(byte[] bytes) {
            super(null);
            this.bytes = bytes;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (!name.equals("SitesLoaded"))
                throw new ClassNotFoundException(name);
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] bytes = Files.readAllBytes(Path.of(args[0], "SitesLoaded.class"));
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int index = t;
            threads[t] = new Thread(() -> {
                start(index);
                churn(index);
            }, "churn-" + t);
            threads[t].start();
        }
        for (int round = 0; round < LOADERS; round++) {
            ClassLoader loader = new OneClassLoader(bytes);
            Method make = loader.loadClass("SitesLoaded").getMethod("make", int.class);
            sink = make.invoke(null, LOADED);
            sink = null;
            loader = null;
            make = null;
            System.gc();
        }
        for (Thread t : threads)
            t.join();
        sink = null;
        System.gc();
        System.out.println("stress done");
    }
}
