/* Classes that unload while cpu=times counts them (CpuTimesUnloadTest): BATCHES class loaders,
 * each defining CLASSES copies of BudgetT_ZZZZZZZZ (5 calls of the copy's own methods per run())
 * that the thread "unload-worker" runs RUNS times each; after each batch the loader is dropped
 * and the worker waits (System.gc(), with a deadline) until it is collected, so the copies'
 * classes unload while the worker keeps making new call paths. Prints how many loaders were
 * collected. */
import java.io.InputStream;
import java.lang.ref.WeakReference;

public class TimesUnloadProgram {
    static final int BATCHES = 8, CLASSES = 300, RUNS = 2;
    static int collected;

    static WeakReference<ClassLoader> batch(byte[] tpl, int b) throws Exception {
        BudgetProgram.Loader loader = new BudgetProgram.Loader();
        for (int i = 0; i < CLASSES; i++) {
            int n = b * CLASSES + i;
            Class<?> c = loader.define(String.format("BudgetT_%08x", n), BudgetProgram.copy(tpl, n));
            Runnable r = (Runnable) c.getDeclaredConstructor().newInstance();
            for (int k = 0; k < RUNS; k++)
                r.run();
        }
        return new WeakReference<>(loader);
    }

    static void work(byte[] tpl) throws Exception {
        for (int b = 0; b < BATCHES; b++) {
            WeakReference<ClassLoader> ref = batch(tpl, b);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (ref.get() != null && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(20);
            }
            if (ref.get() == null)
                collected++;
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] tpl;
        try (InputStream in = TimesUnloadProgram.class.getResourceAsStream("/BudgetT_ZZZZZZZZ.class")) {
            tpl = in.readAllBytes();
        }
        Throwable[] failed = new Throwable[1];
        Thread worker = new Thread(() -> {
            try {
                work(tpl);
            } catch (Throwable t) {
                failed[0] = t;
            }
        }, "unload-worker");
        worker.start();
        worker.join();
        if (failed[0] != null) {
            failed[0].printStackTrace();
            System.exit(3);
        }
        System.out.println("loaders collected: " + collected + " of " + BATCHES);
    }
}
