/* Runs a workload's main method several times in one JVM and prints the process's CPU time
 * (every thread: application, GC, JIT, agent) and wall time of each iteration, so that a
 * benchmark can leave out the JVM's start-up and the first iterations' JIT compilation and
 * measure the steady state only (bench/cpu-samples/vmthreads_overhead.py).
 *
 *   java -cp <classes>[:jars] Repeat <warm-up iterations> <measured iterations> <main class> [args...]
 *
 * Prints, after each iteration,
 *   iter <n> warm|measured cpu_ns=<process CPU of the iteration> wall_ns=<its wall time>
 * and at the end
 *   measured cpu_ns=<sum over the measured iterations> wall_ns=<sum> jit_cpu_ns=<the JIT threads' part>
 *   memory heap_peak_committed_kb=<sum of the heap pools' peak committed> vmhwm_kb=<peak RSS> vmrss_kb=<RSS>
 * The process CPU clock is read with OperatingSystemMXBean.getProcessCpuTime (on Linux the
 * process's CPU-time clock: user + system of all threads, nanoseconds). The workload's own
 * output (its result: line) passes through. */
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.Arrays;

public class Repeat {
    /* CPU time of the JIT compiler threads (kernel names "C1 CompilerThre", "C2 CompilerThre"),
     * from /proc/self/task/<tid>/stat, in clock ticks of 10 ms. Exact only while compiler
     * threads do not exit: run with -XX:-UseDynamicNumberOfCompilerThreads. */
    static long jitCpuNs() throws java.io.IOException {
        long ticks = 0;
        try (java.nio.file.DirectoryStream<java.nio.file.Path> tasks =
                 java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path t : tasks) {
                try {
                    String comm = java.nio.file.Files.readString(t.resolve("comm"));
                    if (!comm.startsWith("C1 CompilerThre") && !comm.startsWith("C2 CompilerThre"))
                        continue;
                    String stat = java.nio.file.Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
                } catch (java.io.IOException e) {
                    // the thread ended while listed
                }
            }
        }
        return ticks * 10_000_000L;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: Repeat <warm-up> <measured> <main class> [args...]");
            System.exit(2);
        }
        int warm = Integer.parseInt(args[0]), measured = Integer.parseInt(args[1]);
        Method main = Class.forName(args[2]).getMethod("main", String[].class);
        String[] rest = Arrays.copyOfRange(args, 3, args.length);
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean();
        long totalCpu = 0, totalWall = 0, totalJit = 0;
        for (int i = 0; i < warm + measured; i++) {
            long j0 = jitCpuNs(), c0 = os.getProcessCpuTime(), w0 = System.nanoTime();
            main.invoke(null, (Object)rest.clone());
            long c1 = os.getProcessCpuTime(), w1 = System.nanoTime(), j1 = jitCpuNs();
            boolean counted = i >= warm;
            if (counted) {
                totalCpu += c1 - c0;
                totalWall += w1 - w0;
                totalJit += j1 - j0;
            }
            System.out.println("iter " + i + " " + (counted ? "measured" : "warm") + " cpu_ns=" + (c1 - c0)
                               + " wall_ns=" + (w1 - w0));
        }
        System.out.println("measured cpu_ns=" + totalCpu + " wall_ns=" + totalWall + " jit_cpu_ns=" + totalJit);
        // What the memory went to, to tell the heap's growth from the rest of the RSS.
        long heapPeak = 0;
        for (java.lang.management.MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans())
            if (p.getType() == java.lang.management.MemoryType.HEAP)
                heapPeak += p.getPeakUsage().getCommitted();
        String hwm = "?", rss = "?";
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
            if (line.startsWith("VmHWM:"))
                hwm = line.replaceAll("[^0-9]", "");
            else if (line.startsWith("VmRSS:"))
                rss = line.replaceAll("[^0-9]", "");
        }
        System.out.println("memory heap_peak_committed_kb=" + heapPeak / 1024 + " vmhwm_kb=" + hwm + " vmrss_kb=" + rss);
    }
}
