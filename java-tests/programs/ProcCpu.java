/* The CPU time of this process's threads as the kernel counts it (/proc/self/task/<tid>/schedstat,
 * nanoseconds on the CPU), grouped by the kernel's thread names: an independent measure for the
 * whole-process cpu=samples tests. Prints one line
 * "proc-cpu-ms process=N gc=N jit=N" (gc: threads named "GC Thread#..", "G1 ..", "Z..",
 * "Shenandoah.."; jit: "C1/C2 CompilerThre.."). */
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

public class ProcCpu {
    static long ns(Path task) {
        try {
            String s = Files.readString(task.resolve("schedstat")).trim();
            return Long.parseLong(s.split(" ")[0]);
        } catch (Exception e) {
            return 0; // the thread ended
        }
    }

    static String comm(Path task) {
        try {
            return Files.readString(task.resolve("comm")).trim();
        } catch (Exception e) {
            return "";
        }
    }

    public static String line() throws Exception {
        long all = 0, gc = 0, jit = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                long n = ns(t);
                String c = comm(t);
                all += n;
                if (c.startsWith("GC Thread") || c.startsWith("G1 ") || c.startsWith("ZWorker")
                        || c.startsWith("ZDriver") || c.startsWith("Shenandoah"))
                    gc += n;
                else if (c.contains("CompilerThre"))
                    jit += n;
            }
        }
        return "proc-cpu-ms process=" + all / 1000000 + " gc=" + gc / 1000000 + " jit=" + jit / 1000000;
    }
}
