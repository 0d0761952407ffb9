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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** monitor=y on real VMs: MONITOR TIME against the program's own measured waits, WAIT and
 *  WAITED lines, a MONITOR DUMP taken with SIGQUIT, virtual threads, and format=b refused. */
class MonitorTest {
    /** Contention the agent reports may differ from the program's own clock by this ratio. */
    static final double TOLERANCE = 0.25;

    // ---- MONITOR TIME, WAIT, WAITED ---------------------------------------------------

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void contentionTimeMatchesTheProgramsOwnWaits(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("monitor-time");
        Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath("monitor=y,file=out.txt")),
                "MonitorContention");
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertTrue(r.out().contains("contention done"), r.describe());
        AsciiProfile out = AsciiProfile.read(dir.resolve("out.txt"));

        double blockedMs = number(r.out(), "blocked_ms");
        // 4 threads x 5 rounds x 50 ms held: the others wait most of that second, several times.
        assertTrue(blockedMs > 500, "the program saw too little contention to test: " + r.out());
        MonitorTime time = monitorTimes(out).get(0);
        assertWithin(blockedMs, time.totalMs, "MONITOR TIME total vs the program's waits\n" + time.text);

        Row turnstile = time.row("MonitorContention$Turnstile");
        assertNotNull(turnstile, "no Turnstile row\n" + time.text);
        assertTrue(turnstile.selfPercent >= 90, time.text);
        // At most every entry (20) was contended; each round but the first of one thread is.
        assertTrue(turnstile.count >= 10 && turnstile.count <= 20, time.text);
        List<String> frames = out.trace(turnstile.trace).frames();
        assertBlockedAt("MonitorContention.contend", "MonitorContention", "CONTENDED HERE", frames.get(0));
        // Object.wait is not contention: the Signal has no row.
        assertEquals(null, time.row("MonitorContention$Signal"), time.text);

        int waiter = out.threadId("signal-waiter");
        double waitedMs = number(r.out(), "signal_waited_ms");
        assertTrue(out.lines.contains("WAIT: MONITOR LMonitorContention$Signal;, timeout=300, thread " + waiter),
                out.grep("WAIT"));
        Matcher m = Pattern.compile("WAITED: MONITOR LMonitorContention\\$Signal;, time_waited=(\\d+), thread " + waiter)
                .matcher(out.text);
        assertTrue(m.find(), out.grep("WAIT"));
        assertWithin(waitedMs, Double.parseDouble(m.group(1)), "time_waited vs the program's clock");
        // The WAITED line comes after its WAIT line.
        assertTrue(out.text.indexOf("WAIT: MONITOR LMonitorContention$Signal;") < m.start(), out.grep("WAIT"));
    }

    // ---- virtual threads ----------------------------------------------------------------

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#virtualThreadJdks")
    void virtualThreadContentionIsChargedToTheVirtualThread(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("monitor-virtual");
        // Two carriers for five virtual threads: they share carriers and move between them.
        Jvm.Result r = Jvm.run(jdk, dir, List.of("-Djdk.virtualThreadScheduler.parallelism=2",
                Jvm.agentpath("monitor=y,thread=y,file=out.txt")), "MonitorContention", "virtual");
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        AsciiProfile out = AsciiProfile.read(dir.resolve("out.txt"));
        MonitorTime time = monitorTimes(out).get(0);
        double blockedMs = number(r.out(), "blocked_ms");
        assertTrue(blockedMs > 500, r.out());
        assertWithin(blockedMs, time.totalMs, "MONITOR TIME total\n" + time.text);

        // thread=y: one Turnstile row per contending thread; each must be a virtual thread
        // (named contender-N), never a carrier, and carry that thread's own waiting time.
        Map<String, Double> msByThread = new HashMap<>();
        for (Row row : time.rows) {
            if (!row.monitor.equals("MonitorContention$Turnstile"))
                continue;
            String name = out.threadOf(row.trace);
            assertNotNull(name, "TRACE " + row.trace + " names no known thread\n" + time.text);
            assertTrue(name.startsWith("contender-"), "contention charged to " + name + "\n" + out.text);
            msByThread.merge(name, row.selfPercent * time.totalMs / 100, Double::sum);
        }
        // Each contender's own blocked time, a row or not: on JDK 21 a virtual thread that holds
        // the monitor while it sleeps pins its carrier, so with two carriers a contender may
        // only get one when the monitor is free and never block (no row, 0 ms of its own).
        for (int i = 0; i < 4; i++) {
            String name = "contender-" + i;
            assertWithin(number(r.out(), "blocked_ms[" + name + "]"), msByThread.getOrDefault(name, 0.0),
                    "time charged to " + name + "\n" + time.text + "\n" + r.out());
        }

        int waiter = out.threadId("signal-waiter");
        assertTrue(out.lines.contains("WAIT: MONITOR LMonitorContention$Signal;, timeout=300, thread " + waiter),
                out.grep("WAIT"));
        assertTrue(out.text.contains("WAITED: MONITOR LMonitorContention$Signal;, time_waited="), out.grep("WAIT"));
    }

    // ---- MONITOR DUMP on SIGQUIT ------------------------------------------------------

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void sigquitDumpShowsOwnerAndWaiters(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("monitor-dump");
        Path stop = dir.resolve("stop");
        Path file = dir.resolve("out.txt");
        Path stdout = dir.resolve("program.out");
        Process p = new ProcessBuilder(jdk.resolve("bin/java").toString(),
                Jvm.agentpath("monitor=y,file=" + file), "-cp", Jvm.programs().toString(),
                "MonitorHeld", stop.toString())
                .directory(dir.toFile())
                .redirectOutput(stdout.toFile())
                .redirectError(dir.resolve("program.err").toFile())
                .start();
        try {
            awaitContent(stdout, "ready", p);
            Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(p.pid())).inheritIO().start();
            assertEquals(0, kill.waitFor());
            awaitContent(file, "MONITOR DUMP END", p);
        } finally {
            Files.writeString(stop, "stop");
            if (!p.waitFor(60, TimeUnit.SECONDS))
                p.destroyForcibly().waitFor();
        }
        assertEquals(0, p.exitValue(), Files.readString(dir.resolve("program.err")));
        assertTrue(Files.readString(stdout).contains("held done"));

        AsciiProfile out = AsciiProfile.read(file);
        String dump = monitorDumps(out).get(0); // the SIGQUIT one; the exit dump follows
        int holder = out.threadId("holder"), notifiee = out.threadId("notifiee");
        int b1 = out.threadId("blocked-1"), b2 = out.threadId("blocked-2");

        Map<Integer, String> status = new HashMap<>();
        Map<Integer, Integer> trace = new HashMap<>();
        Matcher t = Pattern.compile("(?m)^    THREAD (\\d+), trace (\\d+), status: (\\S+)$").matcher(dump);
        while (t.find()) {
            status.put(Integer.parseInt(t.group(1)), t.group(3));
            trace.put(Integer.parseInt(t.group(1)), Integer.parseInt(t.group(2)));
        }
        assertEquals("SL", status.get(holder), dump);
        assertEquals("CW", status.get(notifiee), dump);
        assertEquals("MW", status.get(b1), dump);
        assertEquals("MW", status.get(b2), dump);
        assertBlockedAt("MonitorHeld.enter", "MonitorHeld", "BLOCKED HERE", out.trace(trace.get(b1)).frames().get(0));
        assertBlockedAt("MonitorHeld.enter", "MonitorHeld", "BLOCKED HERE", out.trace(trace.get(b2)).frames().get(0));
        assertTrue(out.trace(trace.get(holder)).frames().stream()
                .anyMatch(f -> f.equals("MonitorHeld.hold(MonitorHeld.java:" + line("MonitorHeld", "HOLDER SLEEPS HERE") + ")")),
                out.trace(trace.get(holder)).frames().toString());

        Matcher vault = Pattern.compile("    MONITOR LMonitorHeld\\$Vault;\n"
                + "\towner: thread (\\d+), entry count: (\\d+)\n"
                + "\twaiting to enter:(.*)\n"
                + "\twaiting to be notified:(.*)\n").matcher(dump);
        assertTrue(vault.find(), dump);
        assertEquals(holder, Integer.parseInt(vault.group(1)), dump);
        assertEquals(2, Integer.parseInt(vault.group(2)), "entered twice\n" + dump);
        assertEquals(Set.of(b1, b2), threadList(vault.group(3)), dump);
        assertEquals(Set.of(notifiee), threadList(vault.group(4)), dump);
        // Every thread a monitor line names has its THREAD line.
        for (int id : List.of(holder, notifiee, b1, b2))
            assertTrue(status.containsKey(id), dump);
    }

    // ---- format=b -----------------------------------------------------------------------

    @Test
    void binaryFormatIsRefused() throws Exception {
        Path dir = Jvm.workDir("monitor-binary");
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, List.of(Jvm.agentpath("monitor=y,format=b")), "Hello");
        assertNotEquals(0, r.exit(), r.describe());
        assertFalse(r.out().contains("hello done"), r.describe());
        Jvm.assertNoCrash(r);
        List<String> errors = r.err().lines().filter(l -> l.startsWith("HPROF ERROR")).toList();
        assertEquals(1, errors.size(), r.describe());
        assertTrue(errors.get(0).contains("format=b") && errors.get(0).contains("monitor=y"), errors.get(0));
        try (Stream<Path> files = Files.list(dir)) {
            assertTrue(files.noneMatch(f -> f.getFileName().toString().startsWith("java.hprof")),
                    "no output file is left behind");
        }
    }

    // ---- helpers ------------------------------------------------------------------------

    static void assertWithin(double expected, double actual, String what) {
        double slack = Math.max(expected * TOLERANCE, 20); // 20 ms: clock and rounding noise
        assertTrue(Math.abs(actual - expected) <= slack,
                what + ": expected " + expected + " +- " + slack + ", got " + actual);
    }

    /** The top frame of a thread blocked on the synchronized statement marked in the source.
     *  HotSpot's interpreter moves past monitorenter before it blocks, so the frame's line is
     *  the synchronized line or, interpreted, the first line of its block. */
    static void assertBlockedAt(String method, String program, String marker, String frame) {
        int l = line(program, marker);
        String at = method + "(" + program + ".java:";
        assertTrue(frame.equals(at + l + ")") || frame.equals(at + (l + 1) + ")"),
                "expected " + at + l + ") (or line " + (l + 1) + "), got " + frame);
    }

    /** "name=value" printed by a test program. */
    static double number(String out, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "=([0-9.]+)$").matcher(out);
        assertTrue(m.find(), name + " not printed:\n" + out);
        return Double.parseDouble(m.group(1));
    }

    /** The line of a program's source that holds the marker comment. */
    static int line(String program, String marker) {
        try {
            List<String> src = Files.readAllLines(Jvm.sourceRoot().resolve("java-tests/programs/" + program + ".java"));
            for (int i = 0; i < src.size(); i++)
                if (src.get(i).contains("// " + marker))
                    return i + 1;
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError(marker + " not in " + program);
    }

    static Set<Integer> threadList(String s) {
        Set<Integer> ids = new HashSet<>();
        Matcher m = Pattern.compile("thread (\\d+)").matcher(s);
        while (m.find())
            ids.add(Integer.parseInt(m.group(1)));
        return ids;
    }

    static void awaitContent(Path file, String text, Process p) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (Files.exists(file) && Files.readString(file).contains(text))
                return;
            if (!p.isAlive())
                throw new AssertionError("the program ended before " + file.getFileName() + " had " + text);
            Thread.sleep(20);
        }
        throw new AssertionError(file + " never had " + text);
    }

    record Row(double selfPercent, long count, int trace, String monitor) {}

    record MonitorTime(long totalMs, List<Row> rows, String text) {
        Row row(String monitor) {
            return rows.stream().filter(r -> r.monitor.equals(monitor)).findFirst().orElse(null);
        }
    }

    /** The MONITOR TIME sections of an ascii profile (at least one), their rows by monitor. */
    static List<MonitorTime> monitorTimes(AsciiProfile out) {
        List<MonitorTime> all = new ArrayList<>();
        for (AsciiProfile.Section s : out.sections("MONITOR TIME")) {
            List<Row> rows = new ArrayList<>();
            for (AsciiProfile.Row r : s.rows()) {
                assertTrue(r.rest().endsWith(" (Java)") && r.numbers().length == 2, "MONITOR TIME row shape: " + r);
                rows.add(new Row(r.self(), r.number(0), (int) r.number(1),
                        r.rest().substring(0, r.rest().length() - " (Java)".length())));
            }
            all.add(new MonitorTime(s.total(), rows, s.text()));
        }
        assertFalse(all.isEmpty(), "no MONITOR TIME\n" + out.text);
        return all;
    }

    /** The MONITOR DUMP sections of an ascii profile (at least one), whole. */
    static List<String> monitorDumps(AsciiProfile out) {
        List<String> all = out.sections("MONITOR DUMP").stream().map(AsciiProfile.Section::text).toList();
        assertFalse(all.isEmpty(), "no MONITOR DUMP\n" + out.text);
        return all;
    }
}
