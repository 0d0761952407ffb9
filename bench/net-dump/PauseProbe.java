import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The profiled program of bench/net-dump-pause.py: a live heap of about MB megabytes (linked
 * nodes, each with a small byte array), and a ticker thread that wakes every millisecond and
 * keeps the longest time it was held up. A heap dump's safepoint holds it up for as long as the
 * VM is stopped, so the longest gap is the application's pause. A second thread starts and
 * joins a short thread every 50 ms and keeps the longest that took: the agent writes THREAD
 * START/END records for them, so this is the pause of a thread that writes to the profile.
 *
 *     java PauseProbe MB SECONDS
 *
 * Prints "ready" once the heap is built, runs SECONDS more, then "max stall MS ms",
 * "max thread start MS ms" and every stall above 20 ms ("stall MS ms at S s").
 */
public class PauseProbe {
    static final class Node {
        Node next;
        byte[] payload;
        int id;
    }

    static volatile boolean running = true;
    static Node keep;

    public static void main(String[] a) throws Exception {
        long target = Long.parseLong(a[0]) << 20;
        long seconds = Long.parseLong(a[1]);
        Node head = null;
        for (long bytes = 0; bytes < target; bytes += 24 + 16 + 96) {
            Node n = new Node();
            n.next = head;
            n.payload = new byte[96];
            n.id = (int) bytes;
            head = n;
        }
        keep = head;
        List<String> stalls = new ArrayList<>();
        long start = System.nanoTime();
        long[] max = {0};
        Thread ticker = new Thread(() -> {
            long last = System.nanoTime();
            while (running) {
                LockSupport.parkNanos(1_000_000);
                long now = System.nanoTime();
                long gap = now - last;
                if (gap > max[0])
                    max[0] = gap;
                if (gap > 20_000_000L)
                    stalls.add(String.format("stall %.1f ms at %.2f s", gap / 1e6, (last - start) / 1e9));
                last = now;
            }
        }, "ticker");
        ticker.start();
        long[] maxStart = {0};
        Thread starter = new Thread(() -> {
            try {
                while (running) {
                    long t = System.nanoTime();
                    Thread s = new Thread(() -> { });
                    s.start();
                    s.join();
                    maxStart[0] = Math.max(maxStart[0], System.nanoTime() - t);
                    Thread.sleep(50);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "starter");
        starter.start();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(seconds * 1000);
        running = false;
        ticker.join();
        starter.join();
        System.out.printf("max stall %.1f ms%n", max[0] / 1e6);
        System.out.printf("max thread start %.1f ms%n", maxStart[0] / 1e6);
        for (String s : stalls)
            System.out.println(s);
        System.out.flush();
    }
}
