/* Stress for cpu=samples' async sampler (bench/cpu-samples/stress.sh, not CI): 64 worker
 * threads that recurse deeply and compute at the bottom, throw and catch exceptions through
 * deep stacks, load classes in throw-away class loaders (unloaded at the next GC), load new
 * subclasses that invalidate code compiled on class-hierarchy assumptions (deoptimization),
 * end and are replaced (thread churn), while one thread calls System.gc() in storms.
 * Usage: Stress <seconds>; prints "stress done <iterations> <classes> <threads>" at the end. */
import java.io.InputStream;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

public class Stress {
    static volatile long sink;
    static final AtomicLong iterations = new AtomicLong(), classes = new AtomicLong(),
            threads = new AtomicLong();
    static byte[] implBytes;

    /* Compiled code calling Base.value() on a Base inlines Impl0's body while Impl0 is the
     * only subclass loaded; each new subclass (a copy of Impl0 in a new loader) breaks that
     * assumption and deoptimizes the callers. */
    public abstract static class Base {
        public abstract long value(long x);
    }

    public static class Impl0 extends Base {
        public long value(long x) {
            return x * 31 + 7;
        }
    }

    static Base[] bases = {new Impl0()};

    static long callBase(long x) {
        Base b = bases[(int) (x & 0) % bases.length];
        long acc = x;
        for (int i = 0; i < 1000; i++)
            acc = b.value(acc);
        return acc;
    }

    /* A loader that defines its own copy of Impl0 (same name, new class). */
    static final class CopyLoader extends ClassLoader {
        CopyLoader() {
            super(Stress.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals(Impl0.class.getName())) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null)
                        c = defineClass(name, implBytes, 0, implBytes.length);
                    return c;
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    static long loadAndDrop() throws Exception {
        Class<?> c = new CopyLoader().loadClass(Impl0.class.getName());
        Base b = (Base) c.getDeclaredConstructor().newInstance();
        classes.incrementAndGet();
        long v = 0;
        for (int i = 0; i < 2000; i++)
            v = b.value(v); // makes the call site in here polymorphic for a while
        return v;
    }

    static long compute(long x) {
        for (int i = 0; i < 2000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static long recurse(int depth, long x, boolean throwAtBottom) {
        if (depth == 0) {
            x = compute(x) + callBase(x);
            if (throwAtBottom)
                throw new IllegalStateException("bottom " + x);
            return x;
        }
        return recurse(depth - 1, x + depth, throwAtBottom) ^ depth;
    }

    static void workerLoop(long until) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int rounds = 200 + r.nextInt(2000); // then the thread ends and a new one replaces it
        for (int i = 0; i < rounds && System.nanoTime() < until; i++) {
            try {
                switch (r.nextInt(8)) {
                    case 0, 1, 2 -> sink += recurse(10 + r.nextInt(3000), i, false);
                    case 3 -> {
                        try {
                            recurse(10 + r.nextInt(1500), i, true);
                        } catch (IllegalStateException e) {
                            sink += e.getStackTrace().length;
                        }
                    }
                    case 4 -> sink += loadAndDrop();
                    case 5 -> sink += callBase(i);
                    case 6 -> {
                        try {
                            Object o = i % 2 == 0 ? "x" : Integer.valueOf(i);
                            sink += ((String) o).length();
                        } catch (ClassCastException e) {
                            sink++;
                        }
                    }
                    default -> sink += compute(i);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            iterations.incrementAndGet();
        }
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        try (InputStream in = Stress.class.getResourceAsStream("Stress$Impl0.class")) {
            implBytes = in.readAllBytes();
        }
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        Thread gc = new Thread(() -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            while (System.nanoTime() < until) {
                for (int i = r.nextInt(20); i > 0; i--)
                    System.gc(); // a storm
                try {
                    Thread.sleep(r.nextInt(500));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "gc-storm");
        gc.start();
        Thread[] workers = new Thread[64];
        while (System.nanoTime() < until) {
            for (int i = 0; i < workers.length; i++) {
                if (workers[i] == null || !workers[i].isAlive()) {
                    // Deep recursion needs a large stack.
                    workers[i] = new Thread(null, () -> workerLoop(until), "worker-" + threads.get(),
                            64L << 20);
                    workers[i].start();
                    threads.incrementAndGet();
                }
            }
            Thread.sleep(50);
        }
        for (Thread w : workers)
            w.join();
        gc.join();
        System.out.println("stress done " + iterations.get() + " " + classes.get() + " " + threads.get());
    }
}
