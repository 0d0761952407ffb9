/* Allocations with known counts for the heap=sites tests (HeapSitesTest). Every object
 * escapes into a static field, so the JIT cannot remove an allocation; the kept ones stay
 * reachable from static arrays, and a System.gc() before exit collects the rest, so the live
 * counts at the exit dump are exactly the kept counts.
 *
 *   makeItems       Item on two lines: ITEMS_A keeping KEPT_A, then ITEMS_B keeping KEPT_B
 *   makeMoreItems   MORE Item, keeps MORE_KEPT (a second site of the same class)
 *   makeArrays      INTS int[7], keeps INTS_KEPT; GRIDS String[][] (new String[2][]), keeps all
 *   work            on each of THREADS threads: WORK Work, keeps WORK_KEPT
 *   copyItems       CLONES clones of an Item (Object.clone, allocated by the VM), keeps all
 *   reflectItems    REFLECTED Items by Constructor.newInstance, keeps all
 *   makePairs       PAIRS times two Pairs on one line (two bytecodes, one site), keeps
 *                   PAIRS_KEPT of each
 *   moveA, moveB    Moved: MOVED_A1 at A keeping KEPT_A1, then MOVED_B at B keeping KEPT_B2,
 *                   a pause, then MOVED_A2 more at A keeping KEPT_A2 (B allocates so much more
 *                   that the agent moves Moved's default site from A to B meanwhile)
 *
 * Arguments "signal <file>": after the first phase it sends itself SIGQUIT (a dump with
 * everything kept), waits until <file> holds that dump's SITES END, then drops everything and
 * exits (the exit dump must show nothing of ours live). */
import java.lang.reflect.Constructor;
import java.nio.file.Files;
import java.nio.file.Path;

public class SitesProgram {
    static final int ITEMS_A = 6000, ITEMS_B = 4000, KEPT_A = 1000, KEPT_B = 234;
    static final int ITEMS_KEPT = KEPT_A + KEPT_B;
    static final int MORE = 777, MORE_KEPT = 77;
    static final int INTS = 5000, INTS_KEPT = 500, GRIDS = 300;
    static final int THREADS = 4, WORK = 2500, WORK_KEPT = 111;
    static final int CLONES = 400, REFLECTED = 250;
    static final int MOVED_A1 = 100, KEPT_A1 = 50, MOVED_B = 80_000, KEPT_B2 = 5000;
    static final int MOVED_A2 = 1000, KEPT_A2 = 100;
    static final int PAIRS = 3000, PAIRS_KEPT = 300;

    static class Item implements Cloneable {
        long a, b;
        int c;

        Item copy() throws CloneNotSupportedException { return (Item) clone(); }
    }

    static class Work {
        int[] none;
        long v;
    }

    static class Pair {
        int v;
    }

    static class Moved {
        int x;
    }

    static volatile Object sink;
    static Object[] keptMoved = new Object[KEPT_A1 + KEPT_B2 + KEPT_A2];
    static int movedKept;

    static void moveA(int n, int keep) {
        for (int i = 0; i < n; i++) {
            Moved m = new Moved();
            sink = m;
            if (i < keep)
                keptMoved[movedKept++] = m;
        }
    }

    static void moveB(int n, int keep) {
        for (int i = 0; i < n; i++) {
            Moved m = new Moved();
            sink = m;
            if (i < keep)
                keptMoved[movedKept++] = m;
        }
    }
    static Object[] keptItems = new Object[ITEMS_KEPT + MORE_KEPT + CLONES + REFLECTED];
    static Object[] keptArrays = new Object[INTS_KEPT + GRIDS];
    static Object[][] keptWork = new Object[THREADS][WORK_KEPT];

    static void makeItems() {
        int kept = 0;
        for (int i = 0; i < ITEMS_A; i++) {
            Item it = new Item();
            sink = it;
            if (kept < KEPT_A && i % 3 == 0)
                keptItems[kept++] = it;
        }
        for (int i = 0; i < ITEMS_B; i++) {
            Item it = new Item();
            sink = it;
            if (kept < ITEMS_KEPT && i % 2 == 1)
                keptItems[kept++] = it;
        }
    }

    static void makeMoreItems() {
        for (int i = 0; i < MORE; i++) {
            Item it = new Item();
            sink = it;
            if (i < MORE_KEPT)
                keptItems[ITEMS_KEPT + i] = it;
        }
    }

    static void makeArrays() {
        for (int i = 0; i < INTS; i++) {
            int[] a = new int[7];
            sink = a;
            if (i < INTS_KEPT)
                keptArrays[i] = a;
        }
        for (int i = 0; i < GRIDS; i++) {
            String[][] g = new String[2][];
            sink = g;
            keptArrays[INTS_KEPT + i] = g;
        }
    }

    static Object[] keptPairs = new Object[2 * PAIRS_KEPT];

    static void makePairs() {
        for (int i = 0; i < PAIRS; i++) {
            Pair p = new Pair(), q = new Pair();
            sink = p;
            sink = q;
            if (i < PAIRS_KEPT) {
                keptPairs[2 * i] = p;
                keptPairs[2 * i + 1] = q;
            }
        }
    }

    static void work(int t) {
        for (int i = 0; i < WORK; i++) {
            Work w = new Work();
            sink = w;
            if (i < WORK_KEPT)
                keptWork[t][i] = w;
        }
    }

    static void copyItems() throws Exception {
        Item proto = (Item) keptItems[0];
        for (int i = 0; i < CLONES; i++)
            keptItems[ITEMS_KEPT + MORE_KEPT + i] = proto.copy();
    }

    static void reflectItems() throws Exception {
        Constructor<Item> c = Item.class.getDeclaredConstructor();
        for (int i = 0; i < REFLECTED; i++)
            keptItems[ITEMS_KEPT + MORE_KEPT + CLONES + i] = c.newInstance();
    }

    public static void main(String[] args) throws Exception {
        makeItems();
        makeMoreItems();
        makeArrays();
        makePairs();
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int index = t;
            threads[t] = new Thread(() -> work(index), "worker-" + t);
            threads[t].start();
        }
        for (Thread t : threads)
            t.join();
        copyItems();
        reflectItems();
        moveA(MOVED_A1, KEPT_A1);
        moveB(MOVED_B, KEPT_B2);
        Thread.sleep(500);
        moveA(MOVED_A2, KEPT_A2);
        sink = null;
        System.gc();
        if (args.length > 1 && args[0].equals("signal")) {
            Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(ProcessHandle.current().pid()))
                    .inheritIO().start();
            kill.waitFor();
            /* The dump runs on the signal dispatcher thread. */
            Path file = Path.of(args[1]);
            for (int i = 0; i < 600; i++) {
                if (Files.exists(file) && Files.readString(file).contains("SITES END"))
                    break;
                Thread.sleep(50);
            }
            keptItems = null;
            keptArrays = null;
            keptWork = null;
            keptMoved = null;
            keptPairs = null;
            System.gc();
        }
        System.out.println("sites done");
    }
}
