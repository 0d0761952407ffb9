import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The workload of hprof-diff's tests (tests/test_diff_runs.sh, bench/diff-noise.sh): one program
 * whose second run changes one thing by a known amount.
 *
 *   cpu SECONDS A_PERCENT   work until the main thread used SECONDS of CPU; per round
 *                           alpha() does 400 * A_PERCENT / 100 units and beta() 600
 *   sites ROUNDS A_PERCENT  per round, 4 * A_PERCENT / 100 Alpha objects allocated at one site
 *                           and 6 int[8] at another
 *   leak DIR N              waits for DIR/go1, then keeps N Leaked objects (a chain), prints
 *                           "leaked", waits for DIR/go2 and exits (two SIGQUIT dumps around it)
 *   keep N                  keeps N Leaked objects and exits (one dump at exit)
 */
public class DiffWorkload {
    static volatile long sink;
    static volatile Object hold;

    static final class Alpha {
        long a, b;
    }

    static final class Leaked {
        Leaked next;
        long payload;
    }

    static long spin(int units, long seed) {
        long x = seed | 1;
        for (int i = 0; i < units * 1000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long alpha(int units) { return spin(units, 17); }

    static long beta(int units) { return spin(units, 31); }

    static void cpu(double seconds, int aPercent) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long until = mx.getCurrentThreadCpuTime() + (long) (seconds * 1e9);
        int a = 400 * aPercent / 100;
        long rounds = 0;
        // the clock is read every 64 rounds: a sample taken in its native call would otherwise
        // stand for a fifth of the run, and how much of it the next call loses varies by run
        do {
            sink += alpha(a);
            sink += beta(600);
        } while ((++rounds & 63) != 0 || mx.getCurrentThreadCpuTime() < until);
        System.out.println("cpu rounds " + rounds);
    }

    static void sites(int rounds, int aPercent) {
        int a = 4 * aPercent / 100;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < a; i++)
                hold = newAlpha();
            for (int i = 0; i < 6; i++)
                hold = newInts();
        }
        System.out.println("sites done");
    }

    static Alpha newAlpha() { return new Alpha(); }

    static int[] newInts() { return new int[8]; }

    static Leaked chain(int n) {
        Leaked head = null;
        for (int i = 0; i < n; i++) {
            Leaked l = new Leaked();
            l.next = head;
            l.payload = i;
            head = l;
        }
        return head;
    }

    static void await(Path p) throws InterruptedException {
        while (!Files.exists(p))
            Thread.sleep(20);
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
        case "cpu" -> cpu(Double.parseDouble(args[1]), Integer.parseInt(args[2]));
        case "sites" -> sites(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        case "leak" -> {
            Path dir = Path.of(args[1]);
            int n = Integer.parseInt(args[2]);
            await(dir); // exists: loads what the wait loop needs before the first dump
            System.out.println("ready");
            await(dir.resolve("go1"));
            hold = chain(n);
            System.out.println("leaked");
            await(dir.resolve("go2"));
            System.out.println("done " + (hold != null));
        }
        case "keep" -> {
            hold = chain(Integer.parseInt(args[1]));
            System.out.println("kept");
        }
        default -> throw new IllegalArgumentException(args[0]);
        }
    }
}
