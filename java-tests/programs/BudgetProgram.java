/* Many new stacks with known counts, for the memory= budget (MemoryBudgetTest): CLASSES copies
 * of BudgetT_ZZZZZZZZ (each a class of its own, 4 methods of unique names), each run RUNS times
 * on one thread, "budget-worker": CLASSES * RUNS * 5 calls of the copies' methods and
 * CLASSES * RUNS * 4 arrays of the copies' classes (BudgetT_*[]), most of them on stacks the agent meets only after its
 * tables reached a small budget. The worker then spins, making no call, until the VM is gone. */
import java.io.InputStream;

public class BudgetProgram {
    static final int CLASSES = 3000, RUNS = 3;
    static volatile boolean done;
    static volatile boolean exiting; /* never set: the worker spins until the VM is gone */

    static final class Loader extends ClassLoader {
        Loader() {
            super(BudgetProgram.class.getClassLoader());
        }

        Class<?> define(String name, byte[] b) {
            return defineClass(name, b, 0, b.length);
        }
    }

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

    /* The worker: Worker.run and work are its only calls besides the copies' (2 calls). */
    static final class Worker extends Thread {
        final Runnable[] copies;

        Worker(Runnable[] copies) {
            super("budget-worker");
            this.copies = copies;
            setDaemon(true);
        }

        @Override
        public void run() {
            work(copies);
        }
    }

    static void work(Runnable[] copies) {
        try {
            for (Runnable r : copies)
                for (int k = 0; k < RUNS; k++)
                    r.run();
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        done = true;
        while (!exiting) {
            // spin without a call: a wait would be a new stack past the budget, and an end of
            // the thread would run Thread.exit
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] tpl;
        try (InputStream in = BudgetProgram.class.getResourceAsStream("/BudgetT_ZZZZZZZZ.class")) {
            tpl = in.readAllBytes();
        }
        Loader loader = new Loader();
        Runnable[] copies = new Runnable[CLASSES];
        for (int i = 0; i < CLASSES; i++) {
            Class<?> c = loader.define(String.format("BudgetT_%08x", i), copy(tpl, i));
            copies[i] = (Runnable) c.getDeclaredConstructor().newInstance();
        }
        new Worker(copies).start();
        while (!done)
            Thread.sleep(10);
        System.out.println("done: " + CLASSES * RUNS * 5 + " calls, " + CLASSES * RUNS * 4
                           + " arrays");
    }
}
