/* Runs a workload (javac <outdir> <srcdir>, or h2 <rows>) in the main thread and prints
 * "timed <main-thread-cpu-ms> <wall-ms>". */
import java.lang.management.ManagementFactory;
import java.nio.file.*;
import java.util.*;
public class Timed {
    public static void main(String[] a) throws Exception {
        var mx = ManagementFactory.getThreadMXBean();
        long c0 = mx.getCurrentThreadCpuTime(), w0 = System.nanoTime();
        if (a[0].equals("javac")) {
            List<String> args = new ArrayList<>(List.of("-d", a[1]));
            try (var s = Files.list(Path.of(a[2]))) { s.forEach(p -> args.add(p.toString())); }
            int rc = javax.tools.ToolProvider.getSystemJavaCompiler().run(null, null, null, args.toArray(new String[0]));
            if (rc != 0) throw new Error("javac " + rc);
        } else {
            H2Bench.main(new String[] {a[1]});
        }
        long c1 = mx.getCurrentThreadCpuTime(), w1 = System.nanoTime();
        System.out.println("timed " + (c1 - c0) / 1000000 + " " + (w1 - w0) / 1000000);
    }
}
