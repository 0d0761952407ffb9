/* For HeapSitesTest's socket test of CONTROL alloc traces off/on. Usage: SitesControl DIR
 * Three phases, each allocating Items at the same site and keeping some: PHASE1 keeping
 * KEPT1, then (once DIR/go2 exists) PHASE2 keeping KEPT2, then (once DIR/go3 exists) PHASE3
 * keeping KEPT3. After each phase it collects and prints "phase N done". Then it waits for
 * DIR/stop and exits. The test turns tracking off before phase 2 and on before phase 3. */
import java.nio.file.Files;
import java.nio.file.Path;

public class SitesControl {
    static final int PHASE1 = 3000, KEPT1 = 300, PHASE2 = 5000, KEPT2 = 500, PHASE3 = 7000,
            KEPT3 = 700;

    static class Item {
        long a;
    }

    static volatile Object sink;
    static final Object[] kept = new Object[KEPT1 + KEPT2 + KEPT3];
    static int nkept;

    static void allocate(int n, int keep) {
        for (int i = 0; i < n; i++) {
            Item it = new Item();
            sink = it;
            if (i < keep)
                kept[nkept++] = it;
        }
    }

    static void await(Path file) throws InterruptedException {
        for (int i = 0; i < 1200 && !Files.exists(file); i++)
            Thread.sleep(50);
    }

    static void done(int phase) {
        sink = null;
        System.gc();
        System.out.println("phase " + phase + " done");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        allocate(PHASE1, KEPT1);
        done(1);
        await(dir.resolve("go2"));
        allocate(PHASE2, KEPT2);
        done(2);
        await(dir.resolve("go3"));
        allocate(PHASE3, KEPT3);
        done(3);
        await(dir.resolve("stop"));
    }
}
