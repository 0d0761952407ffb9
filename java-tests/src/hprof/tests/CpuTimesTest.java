package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** cpu=times and cpu=old on real VMs: exact call counts per trace and per method from a program
 *  with known counts (threads, virtual threads, exceptions, recursion), a SIGQUIT dump, and
 *  real code run instrumented under -Xverify:all (javac, H2). */
class CpuTimesTest {

    // ---- exact counts --------------------------------------------------------------------

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void countsPerTraceAreExact(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-times");
        Jvm.Result r = Jvm.run(jdk, dir, List.of("-Xverify:all", Jvm.agentpath("cpu=times,cutoff=0,file=out.txt")),
                "CpuTimesProgram");
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertTrue(r.out().contains("cpu-times done"), r.describe());
        assertTrue(r.err().contains(" 0 exits without entry"), r.err());
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));

        // depth=4 (default): each distinct top of stack (main -> known -> ...) is a row.
        assertEquals(12345, t.count("leaf", "middle", "known", "main"), t.text);
        assertEquals(678, t.count("middle", "known", "main"), t.text);
        assertEquals(1, t.count("known", "main"), t.text);
        assertEquals(1, t.count("main"), t.text);
        assertEquals(100, t.count("recurse", "known", "main"), t.text);
        assertEquals(100, t.count("recurse", "recurse", "known", "main"), t.text);
        assertEquals(100, t.count("recurse", "recurse", "recurse", "known"), t.text);
        assertEquals(700, t.count("recurse", "recurse", "recurse", "recurse"), t.text);
        assertEquals(50, t.count("thrower", "catcher", "known", "main"), t.text);
        assertEquals(50, t.count("catcher", "known", "main"), t.text);
        // The rows' percentages add up to (about) 100 and the total is in ms.
        assertTrue(t.lastAccum > 99.0 && t.lastAccum <= 100.01, t.text);
        assertTrue(t.total > 0, t.text);
    }

    @Test
    void depthOneGivesOneRowPerMethod() throws Exception {
        Path dir = Jvm.workDir("cpu-times-depth1");
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, List.of(Jvm.agentpath("cpu=times,depth=1,cutoff=0,file=out.txt")),
                "CpuTimesProgram");
        assertEquals(0, r.exit(), r.describe());
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));
        assertEquals(1000, t.count("recurse"), t.text);
        assertEquals(12345, t.count("leaf"), t.text);
    }

    @Test
    void threadYKeepsEachThreadsTraces() throws Exception {
        Path dir = Jvm.workDir("cpu-times-threads");
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, List.of(Jvm.agentpath("cpu=times,thread=y,cutoff=0,file=out.txt")),
                "CpuTimesProgram", "threads");
        assertEquals(0, r.exit(), r.describe());
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));
        // main, worker-1 and worker-2 each: leaf <- middle <- known <- ..., in traces of their own.
        Map<String, Long> byThread = new HashMap<>();
        for (Row row : t.rows) {
            List<String> frames = t.frames(row.trace);
            if (frames.size() >= 2 && frames.get(0).equals("CpuTimesProgram.leaf")
                    && frames.get(1).equals("CpuTimesProgram.middle"))
                byThread.merge(t.threadNames.get(t.traceThread.get(row.trace)), row.count, Long::sum);
        }
        assertEquals(Map.of("main", 12345L, "worker-1", 12345L, "worker-2", 12345L), byThread, t.text);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#virtualThreadJdks")
    void virtualThreadsAreTrackedPerVirtualThread(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-times-virtual");
        // Two carriers for twenty virtual threads that sleep: they unmount and move between
        // carriers in the middle of tracked methods.
        Jvm.Result r = Jvm.run(jdk, dir, List.of("-Djdk.virtualThreadScheduler.parallelism=2",
                Jvm.agentpath("cpu=times,depth=2,cutoff=0,file=out.txt")), "CpuTimesProgram", "virtual");
        assertEquals(0, r.exit(), r.describe());
        assertTrue(r.err().contains(" 0 exits without entry, 0 frames left by exceptions"), r.err());
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));
        assertEquals(20 * 50, t.countTop("vwork"), t.text);
        assertEquals(20 * 50 + 12345, t.countTop("leaf"), t.text);
    }

    // ---- cpu=old ---------------------------------------------------------------------------

    @Test
    void cpuOldWritesOneRowPerMethod() throws Exception {
        Path dir = Jvm.workDir("cpu-old");
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, List.of(Jvm.agentpath("cpu=old,cutoff=0,file=out.txt")),
                "CpuTimesProgram");
        assertEquals(0, r.exit(), r.describe());
        AsciiProfile out = AsciiProfile.read(dir.resolve("out.txt"));
        AsciiProfile.Section m = out.section("CPU TIME BY METHOD (ms)", 0);
        assertTrue(out.sections("CPU TIME (ms)").isEmpty(), "cpu=old writes no per-trace section");
        Map<String, long[]> rows = new HashMap<>();
        for (AsciiProfile.Row row : m.rows()) {
            assertEquals(3, row.numbers().length, "row shape: " + row);
            assertEquals(2, row.rest().split(" ").length, "row shape: " + row);
            rows.put(row.rest(), new long[] {row.number(0), row.number(1), row.number(2)});
        }
        assertEquals(12345, rows.get("CpuTimesProgram.leaf (I)I")[0], m.text());
        assertEquals(678, rows.get("CpuTimesProgram.middle (I)V")[0], m.text());
        assertEquals(1000, rows.get("CpuTimesProgram.recurse (I)I")[0], m.text());
        assertEquals(50, rows.get("CpuTimesProgram.thrower (I)V")[0], m.text());
        long[] main = rows.get("CpuTimesProgram.main ([Ljava/lang/String;)V");
        assertEquals(1, main[0], m.text());
        // main's total time holds everything it called; no method's self exceeds its total.
        for (long[] v : rows.values())
            assertTrue(v[1] <= v[2] + 1, m.text());
        assertTrue(main[2] >= rows.get("CpuTimesProgram.middle (I)V")[2], m.text());
    }

    // ---- dumps ----------------------------------------------------------------------------

    @Test
    void sigquitDumpsCountsSoFar() throws Exception {
        Path dir = Jvm.workDir("cpu-times-sigquit");
        Path stop = dir.resolve("stop"), file = dir.resolve("out.txt"), stdout = dir.resolve("program.out");
        Process p = new ProcessBuilder(Jvm.defaultJdk().resolve("bin/java").toString(),
                Jvm.agentpath("cpu=times,cutoff=0,file=" + file), "-cp", Jvm.programs().toString(),
                "CpuTimesProgram", "wait", stop.toString())
                .directory(dir.toFile()).redirectOutput(stdout.toFile())
                .redirectError(dir.resolve("program.err").toFile()).start();
        try {
            awaitContent(stdout, "ready", p);
            assertEquals(0, new ProcessBuilder("kill", "-QUIT", Long.toString(p.pid())).inheritIO().start().waitFor());
            awaitContent(file, "CPU TIME (ms) END", p);
        } finally {
            Files.writeString(stop, "stop");
            if (!p.waitFor(60, TimeUnit.SECONDS))
                p.destroyForcibly().waitFor();
        }
        assertEquals(0, p.exitValue(), Files.readString(dir.resolve("program.err")));
        String text = Files.readString(file);
        // Two sections: at SIGQUIT and at exit; the counts were all made before "ready".
        assertEquals(12345, new CpuTime(text, 0).count("leaf", "middle", "known", "main"), text);
        assertEquals(12345, new CpuTime(text, 1).count("leaf", "middle", "known", "main"), text);
        assertEquals(2, text.split("CPU TIME \\(ms\\) BEGIN", -1).length - 1, text);
    }

    // ---- the diagnostic probes of bench/cpu-times-floor.sh ----------------------------------

    /** Each stand-in probe runs the program to completion with the same rewriting (same classes
     *  rewritten), warns that it counts nothing, and counts nothing; an unknown one stops the VM. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"noop", "clock", "java-empty", "java-clock", "java-store", "java-buffer"})
    void diagnosticProbesRunAndCountNothing(String probe) throws Exception {
        Path dir = Jvm.workDir("cpu-times-probe-" + probe);
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, Jvm.envWith("HPROF_CPU_TIMES_PROBE", probe),
                List.of(Jvm.agentpath("cpu=times,cutoff=0,file=out.txt")), "CpuTimesProgram");
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertTrue(r.out().contains("cpu-times done"), r.describe());
        assertTrue(r.err().contains("diagnostic probe HPROF_CPU_TIMES_PROBE=" + probe), r.err());
        assertTrue(Pattern.compile("rewrote \\d{3,} boot and \\d+ other classes \\(\\d+ left alone, 0 failed\\)")
                .matcher(r.err()).find(), r.err());
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));
        assertTrue(t.rows.isEmpty(), t.text);
        assertEquals(0, t.total, t.text);
    }

    @Test
    void unknownDiagnosticProbeStopsTheVm() throws Exception {
        Path dir = Jvm.workDir("cpu-times-probe-bad");
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, Jvm.envWith("HPROF_CPU_TIMES_PROBE", "fast"),
                List.of(Jvm.agentpath("cpu=times,file=out.txt")), "Hello");
        assertNotEquals(0, r.exit(), r.describe());
        assertTrue(r.err().contains("HPROF_CPU_TIMES_PROBE=fast: unknown probe (allowed: noop, clock,"), r.describe());
    }

    @Test
    void binaryFormatIsRefused() throws Exception {
        Path dir = Jvm.workDir("cpu-times-binary");
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, List.of(Jvm.agentpath("cpu=times,format=b")), "Hello");
        assertNotEquals(0, r.exit(), r.describe());
        assertTrue(r.err().contains("HPROF ERROR"), r.describe());
    }

    // ---- real code under -Xverify:all -----------------------------------------------------

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void javacCompilesInstrumented(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-times-javac");
        Path src = dir.resolve("src"), out = dir.resolve("classes");
        Process gen = new ProcessBuilder("python3",
                Jvm.sourceRoot().resolve("bench/workloads/gen_sources.py").toString(), src.toString(), "40")
                .inheritIO().start();
        assertEquals(0, gen.waitFor());
        List<String> files;
        try (Stream<Path> s = Files.walk(src)) {
            files = s.filter(f -> f.toString().endsWith(".java")).map(Path::toString).sorted().toList();
        }
        assertEquals(40, files.size());
        List<String> cmd = new ArrayList<>(List.of(jdk.resolve("bin/java").toString(), "-Xverify:all",
                Jvm.agentpath("cpu=times,file=out.txt"), "-m", "jdk.compiler/com.sun.tools.javac.Main",
                "--release", "17", "-d", out.toString()));
        cmd.addAll(files);
        Jvm.Result r = Jvm.exec(cmd, dir, Map.of(), 600);
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertFalse(r.err().contains("VerifyError"), r.err());
        assertTrue(r.err().contains(" 0 failed)"), r.err());
        try (Stream<Path> s = Files.walk(out)) {
            assertTrue(s.filter(f -> f.toString().endsWith(".class")).count() >= 40 * 3);
        }
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));
        assertTrue(t.rows.stream().anyMatch(row -> row.method.startsWith("com.sun.tools.javac.")), t.text);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void h2RunsInstrumented(int feature) throws Exception {
        Path h2 = Path.of("/usr/share/java/h2.jar");
        Assumptions.assumeTrue(Files.exists(h2), "no /usr/share/java/h2.jar (Debian libh2-java): skipped");
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-times-h2");
        List<String> cmd = List.of(jdk.resolve("bin/java").toString(), "-Xverify:all",
                Jvm.agentpath("cpu=times,file=out.txt"), "-cp", Jvm.programs() + ":" + h2, "CpuTimesJdbc");
        Jvm.Result r = Jvm.exec(cmd, dir, Map.of(), 300);
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertFalse(r.err().contains("VerifyError"), r.err());
        assertTrue(r.out().contains("rows 500 sum 125250 groups 7"), r.describe());
        assertTrue(r.err().contains(" 0 failed)"), r.err());
        CpuTime t = CpuTime.read(dir.resolve("out.txt"));
        assertEquals(1, t.countTop("CpuTimesJdbc.main"), t.text);
        assertTrue(t.rows.stream().anyMatch(row -> row.method.startsWith("org.h2.")), t.text);
    }

    // ---- reading the output -----------------------------------------------------------------

    static void awaitContent(Path file, String text, Process p) throws Exception {
        for (int i = 0; i < 600; i++) {
            if (Files.exists(file) && Files.readString(file).contains(text))
                return;
            if (!p.isAlive())
                break;
            Thread.sleep(100);
        }
        throw new AssertionError(file + " never had " + text);
    }

    record Row(long count, int trace, String method) {}

    /** A CPU TIME section of an ascii file (the first, or the which-th), its rows and the traces. */
    static final class CpuTime {
        final String text;
        final List<Row> rows = new ArrayList<>();
        final Map<Integer, List<String>> traces = new HashMap<>();
        final Map<Integer, Integer> traceThread = new HashMap<>();
        final Map<Integer, String> threadNames = new HashMap<>();
        long total;
        double lastAccum;

        CpuTime(String text) {
            this(text, 0);
        }

        CpuTime(String text, int which) {
            this.text = text;
            AsciiProfile a = AsciiProfile.parse(text);
            threadNames.putAll(a.threadNames);
            a.traces.forEach((serial, t) -> {
                traces.put(serial, t.methods());
                if (t.thread() != 0)
                    traceThread.put(serial, t.thread());
            });
            AsciiProfile.Section s = a.section("CPU TIME (ms)", which);
            total = s.total();
            for (AsciiProfile.Row r : s.rows()) {
                assertFalse(r.rest().contains(" "), "CPU TIME row shape: " + r);
                lastAccum = r.accum();
                rows.add(new Row(r.number(0), (int) r.number(1), r.rest()));
            }
        }

        static CpuTime read(Path file) throws IOException {
            return new CpuTime(Files.readString(file));
        }

        List<String> frames(int trace) {
            List<String> f = traces.get(trace);
            assertNotNull(f, "TRACE " + trace + " not written before its row");
            return f;
        }

        /** Calls of the trace whose frames are exactly these CpuTimesProgram methods, top first. */
        long count(String... methods) {
            List<String> want = new ArrayList<>();
            for (String m : methods)
                want.add("CpuTimesProgram." + m);
            return rows.stream().filter(r -> frames(r.trace).equals(want)).mapToLong(Row::count).sum();
        }

        /** Calls of every row whose top frame is this method. */
        long countTop(String method) {
            String name = method.contains(".") ? method : "CpuTimesProgram." + method;
            return rows.stream().filter(r -> r.method.equals(name)).mapToLong(Row::count).sum();
        }
    }
}
