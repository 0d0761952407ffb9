/* For the net= tests. Usage: NetTarget STOP_FILE [MODE]
 *   MODE quiet (default)  allocate a little every 20 ms
 *        threads          also start and join one short thread every 20 ms (records to write)
 *        burst=N          first start and join N short threads one after another, each
 *                         with a 2000-character name (about 8 MB of ascii records)
 * Prints "target ready" first, runs until STOP_FILE exists (or 60 s pass), then prints
 * "target done". A shutdown hook prints "hook ran", so a test sees whether the hooks ran. */
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public class NetTarget {
    static final List<byte[]> kept = new ArrayList<>();

    static void shortThread(String name) throws InterruptedException {
        Thread t = new Thread(() -> {
            synchronized (kept) {
                kept.add(new byte[8]);
            }
        }, name);
        t.start();
        t.join();
    }

    public static void main(String[] args) throws Exception {
        Path stop = Path.of(args[0]);
        String mode = args.length > 1 ? args[1] : "quiet";
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("hook ran")));
        System.out.println("target ready");
        System.out.flush();
        if (mode.startsWith("burst=")) {
            int n = Integer.parseInt(mode.substring(6));
            String pad = "x".repeat(2000);
            for (int i = 0; i < n; i++)
                shortThread("burst-" + i + "-" + pad);
            System.out.println("burst done");
        }
        long deadline = System.nanoTime() + 60_000_000_000L;
        for (int i = 0; !Files.exists(stop) && System.nanoTime() < deadline; i++) {
            synchronized (kept) {
                kept.add(new byte[100]);
                if (kept.size() > 1000)
                    kept.clear();
            }
            if (mode.equals("threads"))
                shortThread("tick-" + i);
            Thread.sleep(20);
        }
        System.out.println("target done");
    }
}
