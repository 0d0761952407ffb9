import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The leak of issue 25: Registry.ENTRIES, a static ArrayList, keeps `args[0]` small objects;
 * the rest of the heap (a HashMap of 5,000 strings, a thread holding a local array) is the same
 * whatever the count. Run twice with counts 10,000 apart and compare the two heap dumps.
 */
public class LeakApp {
    static final class Entry {
        final int id;
        final byte[] payload;
        Entry(int id) { this.id = id; this.payload = new byte[16]; }
    }

    static final class Registry {
        static final List<Entry> ENTRIES = new ArrayList<>();
    }

    static final Map<Integer, String> CACHE = new HashMap<>();

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        for (int i = 0; i < 5000; i++)
            CACHE.put(i, "value-" + i);
        for (int i = 0; i < n; i++)
            Registry.ENTRIES.add(new Entry(i));
        long[] local = new long[4096]; // kept alive by main's frame
        Thread worker = new Thread(() -> {
            int[] mine = new int[8192]; // kept alive by the worker's frame
            try { Thread.sleep(600_000); } catch (InterruptedException e) { }
            System.out.println(mine.length);
        }, "leak-worker");
        worker.setDaemon(true);
        worker.start();
        System.out.println("ready " + ProcessHandle.current().pid() + " " + local.length);
        System.out.flush();
        Thread.sleep(args.length > 1 ? Long.parseLong(args[1]) : 1000);
        System.out.println(local[0]);
    }
}
