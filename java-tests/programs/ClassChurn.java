import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Array;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Classes loaded and unloaded all the time, for heap dumps taken meanwhile (HeapChurnTest).
 * Worker threads each, in a loop, make a fresh class loader, define ClassChurn$Payload (and
 * the classes it uses) in it from the bytes on the class path, make instances and arrays of
 * them, keep a few in a small shared ring for a while and drop the rest, loader included.
 * Every few hundred rounds one of them asks for a GC so that classes really unload.
 *
 *   ClassChurn THREADS SECONDS          churn for SECONDS, print "churn done", exit
 *   ClassChurn THREADS wait GO          print "churn ready", churn until file GO exists
 *   ClassChurn unload GO                one loader's classes, "loaded"; once file GO exists,
 *                                       dropped and GC until they unload, "unloaded"
 */
public class ClassChurn {
    /** Defined again in every loader: fields of every type, own and inherited. */
    public static class PayloadBase {
        public Object baseRef = "base";
        public long baseLong = 1;
        public static Object BASE_STATIC = new int[] {1, 2};
    }

    public static class Payload extends PayloadBase {
        public static Object LOADER_REF; // the payload's own loader, through a static
        public static Payload LAST;
        public boolean z = true;
        public byte b = 2;
        public char c = 'c';
        public short s = 4;
        public int i = 5;
        public long j = 6;
        public float f = 7;
        public double d = 8;
        public Object self = this;
        public Inner inner = new Inner(this);
        public Object[] arr = new Inner[] {inner, null};
        public String name;

        public Payload() {
            LOADER_REF = getClass().getClassLoader();
            LAST = this;
            name = "payload-" + i;
        }
    }

    public static class Inner {
        public final Payload owner;
        public final int[] ints = {1, 2, 3};

        public Inner(Payload owner) {
            this.owner = owner;
        }
    }

    /** Child-first for the payload classes: each loader has its own. */
    static final class ChurnLoader extends ClassLoader {
        private final String marker = "loader " + LOADERS.incrementAndGet();

        ChurnLoader() {
            super(ClassChurn.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("ClassChurn$Payload") && !name.equals("ClassChurn$Inner"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    byte[] b = bytes(name);
                    c = defineClass(name, b, 0, b.length);
                }
                return c;
            }
        }

        @Override
        public String toString() {
            return marker;
        }
    }

    static final AtomicLong LOADERS = new AtomicLong(), ROUNDS = new AtomicLong();
    static final Object[] RING = new Object[64];
    static volatile boolean stop;

    static byte[] bytes(String name) throws ClassNotFoundException {
        try (InputStream in = ClassChurn.class.getResourceAsStream("/" + name.replace('.', '/') + ".class")) {
            if (in == null)
                throw new ClassNotFoundException(name);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new ClassNotFoundException(name, e);
        }
    }

    /** One round: a loader, its classes, some objects; returns one of them. */
    static Object round(int k) throws Exception {
        ClassLoader l = new ChurnLoader();
        Class<?> p = Class.forName("ClassChurn$Payload", true, l);
        Object o = p.getConstructor().newInstance();
        // An array class made now: array classes come without any class event.
        Object arr = Array.newInstance(p, 2 + (k & 3));
        Array.set(arr, 0, o);
        Object arr2 = Array.newInstance(arr.getClass(), 1);
        Array.set(arr2, 0, arr);
        return (k & 1) == 0 ? arr2 : o;
    }

    static void churn(int id) {
        try {
            for (int k = 0; !stop; k++) {
                Object o = round(k);
                synchronized (RING) {
                    RING[(int) (ROUNDS.getAndIncrement() % RING.length)] = o;
                }
                if (id == 0 && k % 300 == 299)
                    System.gc();
            }
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("unload")) {
            unload(Path.of(args[1]));
            return;
        }
        int threads = Integer.parseInt(args[0]);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread t = new Thread(() -> churn(id), "churn-" + i);
            t.start();
            ts.add(t);
        }
        if (args[1].equals("wait")) {
            Path go = Path.of(args[2]);
            System.out.println("churn ready");
            System.out.flush();
            while (!Files.exists(go))
                Thread.sleep(20);
        } else {
            System.out.println("churn ready");
            System.out.flush();
            Thread.sleep(Long.parseLong(args[1]) * 1000);
        }
        stop = true;
        for (Thread t : ts)
            t.join();
        System.out.println("churn done: " + ROUNDS.get() + " rounds, " + LOADERS.get() + " loaders");
    }

    /** A known class unload: the payload classes of one loader are loaded and used, "loaded"
     * is printed; once file GO exists they are dropped and GCs run until a WeakReference to
     * the class clears: "unloaded" (or "still loaded" after 100 GCs). */
    static void unload(Path go) throws Exception {
        java.lang.ref.WeakReference<Class<?>> ref = loadOne();
        System.out.println("loaded");
        System.out.flush();
        while (!Files.exists(go))
            Thread.sleep(20);
        for (int i = 0; i < 100 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        System.out.println(ref.get() == null ? "unloaded" : "still loaded");
    }

    /** In a method of its own: no local of the caller's frame keeps the loader. */
    static java.lang.ref.WeakReference<Class<?>> loadOne() throws Exception {
        Class<?> p = Class.forName("ClassChurn$Payload", true, new ChurnLoader());
        p.getConstructor().newInstance();
        Array.newInstance(p, 1);
        return new java.lang.ref.WeakReference<>(p);
    }
}
