/* The CPU time of this process's threads as the kernel counts it (/proc/self/task/<tid>/schedstat,
 * nanoseconds on the CPU), grouped by the kernel's thread names: an independent measure for the
 * whole-process cpu=samples tests. start() takes a snapshot; line() prints the CPU time used
 * since, "proc-cpu-ms process=N gc=N jit=N" (gc: threads named "GC Thread#..", "G1 ..",
 * "ZWorker..", "ZDriver..", "Shenandoah.."; jit: "C1/C2 CompilerThre.."; a thread that started
 * after the snapshot counts from 0, one that ended is not counted). */
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

public class ProcCpu {
    static final Map<String, Long> base = new HashMap<>();

    static long ns(Path task) {
        try {
            String s = Files.readString(task.resolve("schedstat")).trim();
            return Long.parseLong(s.split(" ")[0]);
        } catch (Exception e) {
            return -1; // the thread ended
        }
    }

    static String comm(Path task) {
        try {
            return Files.readString(task.resolve("comm")).trim();
        } catch (Exception e) {
            return "";
        }
    }

    static Map<String, Long> snapshot() throws Exception {
        Map<String, Long> m = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                long n = ns(t);
                if (n >= 0)
                    m.put(t.getFileName() + " " + comm(t), n);
            }
        }
        return m;
    }

    public static void start() throws Exception {
        base.putAll(snapshot());
    }

    /** CPU time of the process since start(), in ms. */
    public static long processMs() throws Exception {
        long all = 0;
        for (Map.Entry<String, Long> e : snapshot().entrySet())
            all += e.getValue() - base.getOrDefault(e.getKey(), 0L);
        return all / 1000000;
    }

    public static String line() throws Exception {
        long all = 0, gc = 0, jit = 0;
        for (Map.Entry<String, Long> e : snapshot().entrySet()) {
            long n = e.getValue() - base.getOrDefault(e.getKey(), 0L);
            String c = e.getKey().substring(e.getKey().indexOf(' ') + 1);
            all += n;
            if (c.startsWith("GC Thread") || c.startsWith("G1 ") || c.startsWith("ZWorker")
                    || c.startsWith("ZDriver") || c.startsWith("Shenandoah"))
                gc += n;
            else if (c.contains("CompilerThre"))
                jit += n;
        }
        return "proc-cpu-ms process=" + all / 1000000 + " gc=" + gc / 1000000 + " jit=" + jit / 1000000;
    }
}
