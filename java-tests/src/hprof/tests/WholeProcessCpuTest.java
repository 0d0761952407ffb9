package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** cpu=samples over the whole process (issue 28): the threads JVMTI does not report (GC, JIT)
 * get samples in proportion to their CPU time, which the program measures itself from
 * /proc/self/task (ProcCpu: schedstat, an independent reading). */
class WholeProcessCpuTest {
    /** The program's own measure: "proc-cpu-ms process=N gc=N jit=N". */
    record ProcCpu(long process, long gc, long jit) {
        static ProcCpu of(Jvm.Result r) {
            Matcher m = Pattern.compile("proc-cpu-ms process=(\\d+) gc=(\\d+) jit=(\\d+)").matcher(r.out());
            assertTrue(m.find(), r.describe());
            return new ProcCpu(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)));
        }
    }

    static long rowsUnder(CpuSamplesTest.Profile p, String prefix) {
        return p.rows().stream().filter(r -> r.method().startsWith(prefix)).mapToLong(CpuSamplesTest.Profile.Row::count).sum();
    }

    /** A profile (interval=2 ms, cutoff=0) and the program's own /proc measure, after checking
     * the total: the process's CPU time within 10%. */
    record Run(CpuSamplesTest.Profile profile, ProcCpu proc) {}

    static final int INTERVAL = 2;

    static Run profileOf(int feature, String name, List<String> vmArgs, String options, String... program)
            throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir(name);
        List<String> args = new java.util.ArrayList<>(vmArgs);
        args.add(Jvm.agentpath("cpu=samples,interval=" + INTERVAL + ",cutoff=0,file=cpu.txt," + options));
        Jvm.Result r = Jvm.runClean(jdk, dir, args, program[0], java.util.Arrays.copyOfRange(program, 1, program.length));
        CpuSamplesTest.Profile p = CpuSamplesTest.Profile.read(dir.resolve("cpu.txt"));
        ProcCpu proc = ProcCpu.of(r);
        assertTrue(proc.process() >= 1000, "the program ran too little to judge\n" + r.describe());
        double ratio = (double) p.total() * INTERVAL / proc.process();
        assertTrue(ratio > 0.9 && ratio < 1.1,
                p.total() + " samples x " + INTERVAL + " ms vs " + proc + "\n" + p.text());
        return new Run(p, proc);
    }

    /** GcHeavy: a large live set replaced piece by piece (GC well over a quarter of the CPU, and
     * C2 compiling at the start): the [GC] and [JIT] shares of the samples are the GC and
     * compiler threads' shares of the process's CPU time within 5 points, and the total is
     * the process's CPU time within 10%. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void gcAndJitThreadsGetSamplesInProportionToTheirCpuTime(int feature) throws Exception {
        Run run = profileOf(feature, "cpu-whole-gc",
                List.of("-Xmx160m", "-XX:+UseG1GC", "-XX:-UseDynamicNumberOfCompilerThreads"), "depth=1",
                "GcHeavy", "1500", "1500000");
        CpuSamplesTest.Profile p = run.profile();
        ProcCpu proc = run.proc();
        double gcMeasured = (double) proc.gc() / proc.process();
        assertTrue(gcMeasured >= 0.25, "GcHeavy should spend a quarter of its CPU in GC: " + proc);

        long total = p.total();
        double gcShare = (double) rowsUnder(p, "[GC].") / total;
        assertTrue(Math.abs(gcShare - gcMeasured) <= 0.05,
                "[GC] has " + Math.round(gcShare * 100) + "% of the samples, the GC threads "
                        + Math.round(gcMeasured * 100) + "% of the CPU: " + proc + "\n" + p.text());
        double jitShare = (double) rowsUnder(p, "[JIT].") / total;
        double jitMeasured = (double) proc.jit() / proc.process();
        assertTrue(Math.abs(jitShare - jitMeasured) <= 0.05,
                "[JIT] has " + Math.round(jitShare * 100) + "% of the samples, the compiler threads "
                        + Math.round(jitMeasured * 100) + "% of the CPU: " + proc + "\n" + p.text());
        assertTrue(rowsUnder(p, "GcHeavy.") > 0, "the Java thread's samples are there too\n" + p.text());
    }

    /** DeflateLoop: a thread compressing with Deflater all the time. At least 80% of all samples
     * have a zlib function (named, or "<unknown>" in a stripped libz; Temurin's libzip.so has
     * zlib inside, with its symbols: longest_match, deflate_slow...) right on top of
     * Deflater's native method, and the total is the process's CPU time within 10%. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void nativeCodeOfAJavaThreadIsNamedOnTopOfItsJavaStack(int feature) throws Exception {
        CpuSamplesTest.Profile p = profileOf(feature, "cpu-whole-zlib", List.of(), "depth=3", "DeflateLoop", "1500")
                .profile();
        long total = p.total();
        long zlibOnDeflater = 0;
        for (CpuSamplesTest.Profile.Row row : p.rows()) {
            List<String> frames = p.traceFrames().get(row.trace());
            // Debian's JDKs call the system's libz; Temurin's carries zlib inside libzip.so.
            if (frames.size() >= 2 && (frames.get(0).startsWith("[libz.so") || frames.get(0).startsWith("[libzip.so"))
                    && frames.get(1).startsWith("java.util.zip.Deflater.deflateBytes"))
                zlibOnDeflater += row.count();
        }
        assertTrue(zlibOnDeflater >= 0.8 * total,
                zlibOnDeflater + " of " + total + " samples with zlib on top of Deflater\n" + p.text());
    }

    static Stream<Arguments> jdk17() {
        return Stream.of(Arguments.of(17));
    }

    /** vmthreads=n: Java threads only, as before issue 28 (one JDK: the switch is the agent's). */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("jdk17")
    void vmthreadsOffLeavesOnlyJavaThreads(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-whole-off");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of("-Xmx160m", Jvm.agentpath("cpu=samples,vmthreads=n,interval=2,depth=1,cutoff=0,file=cpu.txt")),
                "GcHeavy", "500", "1500000");
        CpuSamplesTest.Profile p = CpuSamplesTest.Profile.read(dir.resolve("cpu.txt"));
        assertEquals(0, rowsUnder(p, "[GC]") + rowsUnder(p, "[JIT]") + rowsUnder(p, "[VM]"),
                "no pseudo-thread rows with vmthreads=n\n" + p.text());
        assertTrue(rowsUnder(p, "GcHeavy.") > 0, p.text());
    }
}
