import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Known call counts for cpu=times and cpu=old (CpuTimesTest):
 * <ul>
 * <li>leaf: 12345 calls, all from middle, which main calls 678 times;
 * <li>recurse: 10 deep, repeated 100 times from main (1000 calls);
 * <li>thrower: always throws, called 50 times from catcher (which catches), 50 calls.
 * </ul>
 * Modes (first argument): none = the above on main; "threads" = the above on two threads named
 * worker-1 and worker-2 as well; "virtual" = 20 virtual threads (JDK 21+) each calling vwork 50
 * times, sleeping (so unmounting) every 10 calls; "wait FILE" = the above, then print "ready"
 * and wait until FILE exists (for a SIGQUIT dump).
 */
public class CpuTimesProgram {
    static int sink;

    static int leaf(int x) {
        return x * 31 + 7;
    }

    static void middle(int calls) {
        for (int k = 0; k < calls; k++)
            sink += leaf(k);
    }

    static int recurse(int depth) {
        return depth <= 1 ? 1 : 1 + recurse(depth - 1);
    }

    static void thrower(int i) {
        throw new IllegalStateException("always " + i);
    }

    static void catcher(int i) {
        try {
            thrower(i);
        } catch (IllegalStateException e) {
            sink++;
        }
    }

    static void known() {
        int leaves = 0;
        for (int i = 0; i < 678; i++) {
            int n = 12345 / 678 + (i < 12345 % 678 ? 1 : 0);
            middle(n);
            leaves += n;
        }
        if (leaves != 12345)
            throw new AssertionError(leaves);
        for (int r = 0; r < 100; r++)
            sink += recurse(10);
        for (int i = 0; i < 50; i++)
            catcher(i);
    }

    static void vwork(int i) throws InterruptedException {
        sink += leaf(i);
        if (i % 10 == 0)
            Thread.sleep(1);
    }

    static void virtualThreads() throws Exception {
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 20; t++) {
            // Thread.ofVirtual().start(r), by reflection: compiled with --release 17.
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Runnable r = () -> {
                try {
                    for (int i = 0; i < 50; i++)
                        vwork(i);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            };
            threads.add((Thread) Class.forName("java.lang.Thread$Builder")
                    .getMethod("start", Runnable.class).invoke(builder, r));
        }
        for (Thread t : threads)
            t.join();
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "";
        known();
        if (mode.equals("threads")) {
            List<Thread> threads = new ArrayList<>();
            for (int t = 1; t <= 2; t++) {
                Thread th = new Thread(CpuTimesProgram::known, "worker-" + t);
                th.start();
                threads.add(th);
            }
            for (Thread t : threads)
                t.join();
        } else if (mode.equals("virtual")) {
            virtualThreads();
        } else if (mode.equals("wait")) {
            System.out.println("ready");
            System.out.flush();
            Path stop = Path.of(args[1]);
            while (!Files.exists(stop))
                Thread.sleep(20);
        }
        System.out.println("cpu-times done " + sink);
    }
}
