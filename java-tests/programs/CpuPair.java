/* cpu=samples CONTROL commands: threads "busy-a" and "busy-b" both compute (spinA, spinB)
 * until the file named by args[0] exists (or 120 s pass); main sleeps. Prints "pair ready"
 * once both run, "pair done" at the end. Usage: CpuPair <stop-file> */
import java.nio.file.Files;
import java.nio.file.Path;

public class CpuPair {
    static volatile long sink;
    static volatile boolean stop;

    static long spinA(long n) {
        long x = sink;
        for (long i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static long spinB(long n) {
        long x = sink;
        for (long i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        Path stopFile = Path.of(args[0]);
        Thread a = new Thread(() -> {
            while (!stop)
                sink += spinA(100_000);
        }, "busy-a");
        Thread b = new Thread(() -> {
            while (!stop)
                sink += spinB(100_000);
        }, "busy-b");
        a.start();
        b.start();
        System.out.println("pair ready");
        System.out.flush();
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!Files.exists(stopFile) && System.nanoTime() < deadline)
            Thread.sleep(20);
        stop = true;
        a.join();
        b.join();
        System.out.println("pair done");
    }
}
