package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** cpu=samples on real VMs: accuracy, idle threads, native code, many threads, binary output. */
class CpuSamplesTest {
    /** What an ascii profile says about threads, traces and CPU samples (AsciiProfile's reading). */
    record Profile(Map<Integer, String> threadNames, Map<Integer, Integer> traceThread,
                   Map<Integer, List<String>> traceFrames, long total, List<Row> rows, String text) {
        record Row(double self, long count, int trace, String method) {}

        static Profile read(Path file) throws Exception {
            AsciiProfile a = AsciiProfile.read(file);
            List<AsciiProfile.Section> samples = a.sections("CPU SAMPLES");
            assertFalse(samples.isEmpty(), "no CPU SAMPLES section\n" + a.text);
            assertEquals(1, samples.size(), "one CPU SAMPLES section expected\n" + a.text);
            Map<Integer, Integer> traceThread = new HashMap<>();
            Map<Integer, List<String>> frames = new HashMap<>();
            a.traces.forEach((serial, t) -> {
                frames.put(serial, t.frames());
                if (t.thread() != 0)
                    traceThread.put(serial, t.thread());
            });
            List<Row> rows = samples.get(0).rows().stream()
                    .map(r -> new Row(r.self(), r.number(0), (int) r.number(1), r.rest())).toList();
            for (Row r : rows)
                assertFalse(r.method().contains(" "), "CPU SAMPLES row shape: " + r);
            return new Profile(a.threadNames, traceThread, frames, samples.get(0).total(), rows, a.text);
        }

        /** Samples per thread name (thread=y), over the rows written; the rows of threads the
         * VM does not report ("[GC].G1_Conc#0", vmthreads=y) have no thread and are left out. */
        Map<String, Long> byThread() {
            Map<String, Long> m = new HashMap<>();
            for (Row r : rows) {
                if (r.method().startsWith("[") && !traceThread.containsKey(r.trace()))
                    continue;
                Integer thread = traceThread.get(r.trace());
                assertNotNull(thread, "trace " + r.trace() + " has no thread\n" + text);
                String name = threadNames.get(thread);
                assertNotNull(name, "thread " + thread + " has no THREAD START\n" + text);
                m.merge(name, r.count(), Long::sum);
            }
            return m;
        }

        /** Samples of rows on thread name whose top frame is method. */
        long count(String thread, String method) {
            long n = 0;
            for (Row r : rows)
                if (r.method().equals(method) && thread.equals(threadNames.get(traceThread.get(r.trace()))))
                    n += r.count();
            return n;
        }

        /** Whether a row or frame is one of the threads the VM does not report (vmthreads=y). */
        static boolean otherThread(String method) {
            for (String kind : List.of("[GC].", "[JIT].", "[VM].", "[native].", "[agent]."))
                if (method.startsWith(kind))
                    return true;
            return false;
        }

        /** The samples of Java threads: the total without the GC, JIT, VM and native threads'. */
        long javaThreadsTotal() {
            return total - rows.stream().filter(r -> otherThread(r.method())).mapToLong(Row::count).sum();
        }

        long sumOfRows() {
            return rows.stream().mapToLong(Row::count).sum();
        }
    }

    static long busyCpuMs(Jvm.Result r) {
        Matcher m = Pattern.compile("busy-cpu-ms (\\d+)").matcher(r.out());
        assertTrue(m.find(), r.describe());
        return Long.parseLong(m.group(1));
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void threeToOneWorkShowsAsThreeToOneAndIdleThreadsAsNothing(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-accuracy");
        int interval = 5;
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,thread=y,interval=" + interval + ",cutoff=0,file=cpu.txt")),
                "CpuBusy", "4000");
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        assertEquals(p.total(), p.sumOfRows(), "cutoff=0 writes every row\n" + p.text());
        Map<String, Long> byThread = p.byThread();

        long a = p.count("busy", "CpuBusy.hotA"), b = p.count("busy", "CpuBusy.hotB");
        assertTrue(a + b >= 100, "too few samples to judge: " + byThread + "\n" + p.text());
        double shareA = (double) a / (a + b);
        assertTrue(shareA >= 0.65 && shareA <= 0.85,
                "hotA should have about 75% of hotA+hotB, has " + a + " vs " + b + "\n" + p.text());

        long idle = 0;
        for (Map.Entry<String, Long> e : byThread.entrySet())
            if (e.getKey().startsWith("idle-"))
                idle += e.getValue();
        assertTrue(idle <= Math.max(3, p.total() / 100),
                "idle threads (socket read, sleep, park, wait, monitor) got " + idle + " of "
                        + p.total() + ": " + byThread + "\n" + p.text());

        // A sample is one interval of CPU time: the busy thread's samples match its CPU time.
        long busySamples = byThread.getOrDefault("busy", 0L);
        long cpuMs = busyCpuMs(r);
        double ratio = (double) busySamples * interval / cpuMs;
        assertTrue(ratio > 0.85 && ratio < 1.15,
                "busy: " + busySamples + " samples x " + interval + " ms vs " + cpuMs + " ms of CPU\n" + p.text());
    }

    static Stream<Arguments> jdksAndFormats() {
        return Jvm.jdksTimes("a", "b");
    }

    /** Samples whose top frame is InlinedLeaf.mix, and the total, from an ascii or binary profile. */
    static long[] mixShare(Path dir, String format) throws Exception {
        if (format.equals("a")) {
            Profile p = Profile.read(dir.resolve("cpu.txt"));
            assertEquals(p.total(), p.sumOfRows(), p.text());
            long mix = p.rows().stream().filter(row -> row.method().equals("InlinedLeaf.mix"))
                    .mapToLong(Profile.Row::count).sum();
            return new long[] {mix, p.javaThreadsTotal()}; // the share among Java threads' samples
        }
        HprofRead.Report report = HprofRead.check(dir.resolve("cpu.hprof"), "--top", "1000000");
        assertEquals(0, report.exit(), report.output());
        long total = (Long) report.get("cpu_samples", "total");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) report.get("cpu_samples", "top");
        long mix = 0, sum = 0, other = 0;
        for (Map<String, Object> row : rows) {
            long count = (Long) row.get("count");
            sum += count;
            if (((String) row.get("frame")).startsWith("InlinedLeaf.mix("))
                mix += count;
            if (Profile.otherThread((String) row.get("frame")))
                other += count;
        }
        assertEquals(total, sum, "cutoff=0 writes every row\n" + report.output());
        return new long[] {mix, total - other};
    }

    /** The issue's accuracy test: a long straight-line method that C2 inlines into a loop has
     * nearly all the CPU time; a sampler that only sees threads at safepoint polls credits the
     * loop around it (measured: 0-2% for mix), the async sampler credits mix itself. */
    @ParameterizedTest(name = "JDK {0}, format={1}")
    @MethodSource("jdksAndFormats")
    void inlinedStraightLineMethodIsTheTopFrame(int feature, String format) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-inlined");
        String file = format.equals("a") ? "cpu.txt" : "cpu.hprof";
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,depth=8,cutoff=0,format=" + format + ",file=" + file)),
                "InlinedLeaf", "3000");
        long[] m = mixShare(dir, format);
        assertTrue(m[1] >= 50, "too few samples to judge: " + m[1] + "\n" + r.describe());
        double share = (double) m[0] / m[1];
        assertTrue(share >= 0.85, "InlinedLeaf.mix is the top frame of " + m[0] + " of " + m[1]
                + " samples (" + Math.round(share * 100) + "%), 85% expected\n" + r.describe());
    }

    /** Time a thread spends in the VM on a method's behalf (here: zeroing large arrays it
     * allocates) is credited to that method. AsyncGetCallTrace declines such samples (before
     * late walks: 99% of this program's samples were <unwalkable>.unknown_not_java); the late
     * walker takes the stack with GetStackTrace, which cannot change until the thread is back
     * in Java. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void timeInTheVmIsCreditedToTheJavaMethodThatAskedForIt(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-vm-time");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,interval=1,depth=4,cutoff=0,verbose=y,file=cpu.txt")),
                "ZeroedArrays", "2500");
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        assertEquals(p.total(), p.sumOfRows(), p.text());
        assertTrue(p.total() >= 500, "too few samples to judge: " + p.total() + "\n" + r.describe());
        long fill = p.rows().stream().filter(row -> row.method().equals("ZeroedArrays.fill"))
                .mapToLong(Profile.Row::count).sum();
        long javaTotal = p.javaThreadsTotal(); // the GC's own threads are no Java method's time
        assertTrue(fill >= javaTotal * 0.85, "ZeroedArrays.fill has " + fill + " of " + javaTotal
                + " samples of Java threads, 85% expected\n" + r.describe());
        Matcher late = Pattern.compile("(\\d+) samples walked late").matcher(r.err());
        assertTrue(late.find() && Long.parseLong(late.group(1)) >= javaTotal / 2,
                "most samples should have been walked late\n" + r.describe());
        Matcher unwalkable = Pattern.compile("(\\d+) unwalkable \\(").matcher(r.err());
        assertTrue(unwalkable.find(), r.describe());
        assertTrue(Long.parseLong(unwalkable.group(1)) < p.total() * 0.02, r.describe());
    }

    static Stream<Arguments> jdksAndIntervals() {
        return Jvm.jdksTimes(10, 1);
    }

    /** A thread busy on the CPU for T seconds gets T / interval samples (within 10%). */
    @ParameterizedTest(name = "JDK {0}, interval={1}")
    @MethodSource("jdksAndIntervals")
    void busyThreadGetsItsCpuTimeOverIntervalSamples(int feature, int interval) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-rate");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,thread=y,cutoff=0,interval=" + interval + ",file=cpu.txt")),
                "InlinedLeaf", "3000");
        Matcher m = Pattern.compile("leaf-cpu-ms (\\d+)").matcher(r.out());
        assertTrue(m.find(), r.describe());
        long cpuMs = Long.parseLong(m.group(1));
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        long samples = p.byThread().getOrDefault("leaf-loop", 0L);
        double expected = (double) cpuMs / interval;
        assertTrue(Math.abs(samples - expected) <= expected * 0.10,
                "leaf-loop: " + samples + " samples at interval=" + interval + " for " + cpuMs
                        + " ms of CPU (" + Math.round(expected) + " expected)\n" + r.describe());
    }

    /** The application takes SIGPROF over while the async sampler runs: the agent says so once
     * and the safepoint sampler goes on sampling every thread. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void signalTakenOverFallsBackToTheSafepointSampler(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-takeover");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,thread=y,cutoff=0,file=cpu.txt")),
                "SignalTakeover", "4000", "1500");
        assertEquals(1, r.err().split("replaced hprof's SIGPROF handler", -1).length - 1, r.describe());
        Matcher m = Pattern.compile("busy-cpu-ms (\\d+)").matcher(r.out());
        assertTrue(m.find(), r.describe());
        long cpuMs = Long.parseLong(m.group(1));
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        long samples = p.count("busy", "SignalTakeover.work");
        // Samples keep coming after the takeover; the CPU time between the takeover and the
        // agent's check (at most a second) is lost.
        assertTrue(samples * 10 >= (cpuMs - 1100) * 0.8 && samples * 10 <= cpuMs * 1.15,
                samples + " samples for " + cpuMs + " ms of CPU\n" + p.text() + r.describe());
    }

    /** sampler=safepoint keeps the old sampler: a stack is taken at a poll, so the inlined
     * method's time shows in the loop around it. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void safepointSamplerIsStillThere(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-safepoint");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,sampler=safepoint,depth=8,cutoff=0,file=cpu.txt")),
                "InlinedLeaf", "2000");
        assertFalse(r.err().contains("async sampler"), r.describe());
        long[] m = mixShare(dir, "a");
        // Under load the thread may get a fifth of a core: 20 samples are enough to see it.
        assertTrue(m[1] >= 20 && m[0] < m[1] / 2, m[0] + " of " + m[1] + "\n" + r.describe());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#virtualThreadJdks")
    void virtualThreadsAreSampledWithTheirOwnStacks(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-virtual");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,thread=y,interval=5,depth=8,cutoff=0,file=cpu.txt")),
                "VirtualBusy", "350");
        assertTrue(r.out().contains("virtual-busy done true true"), r.describe());
        Jvm.assertNoCrash(r);
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        assertEquals(p.total(), p.sumOfRows(), p.text());
        Map<String, Long> byThread = p.byThread(); // every trace's thread has a THREAD START

        // The virtual thread runs twice the platform thread's work in the same loop, at the same
        // time: two thirds of the two methods' samples are its own.
        long v = p.count("vbusy", "VirtualBusy.vthreadWork");
        long pl = p.count("pbusy", "VirtualBusy.platformWork");
        assertTrue(v + pl >= 100, "too few samples to judge: " + byThread + "\n" + p.text());
        double share = (double) v / (v + pl);
        assertTrue(share >= 0.67 - 0.15 && share <= 0.67 + 0.15,
                "vthreadWork should have about 67% of the two, has " + v + " vs " + pl + "\n" + p.text());
        // Its samples are nearly all in its own method, on its own stack: the virtual thread's
        // frames, never the carrier's (ForkJoinPool, VirtualThread.runContinuation).
        long vAll = byThread.getOrDefault("vbusy", 0L);
        assertTrue(v >= vAll * 0.9, byThread + "\n" + p.text());
        for (Profile.Row row : p.rows()) {
            if (!"vbusy".equals(p.threadNames().get(p.traceThread().get(row.trace()))))
                continue;
            List<String> frames = p.traceFrames().get(row.trace());
            assertNotNull(frames, p.text());
            for (String f : frames)
                assertFalse(f.startsWith("java.util.concurrent.ForkJoin") || f.contains("runContinuation"),
                        "carrier frame in a virtual thread's trace " + row.trace() + ": " + f + "\n" + p.text());
        }
        // No carrier gets the virtual thread's work as its own (carriers do get their own
        // work: mounting and unmounting vpingpong).
        for (Profile.Row row : p.rows()) {
            String thread = p.threadNames().get(p.traceThread().get(row.trace())); // null: [GC] rows
            if (thread != null && thread.startsWith("ForkJoinPool"))
                assertFalse(p.traceFrames().get(row.trace()).stream().anyMatch(f -> f.startsWith("VirtualBusy.")),
                        "a carrier with the virtual thread's frames: " + row + "\n" + p.text());
        }
        // Parked and sleeping virtual threads use no CPU while they wait: at most a sample or two
        // of real CPU in going to sleep (JDK 21 sets up the unpark timer on the sleeping thread
        // itself: ScheduledThreadPoolExecutor under VirtualThread.parkNanos, seen in CI), and
        // those only inside the park/sleep machinery, never in the work around it.
        for (String idle : List.of("vpark", "vsleep")) {
            assertTrue(byThread.getOrDefault(idle, 0L) <= 2, byThread + "\n" + p.text());
            for (Profile.Row row : p.rows()) {
                if (!idle.equals(p.threadNames().get(p.traceThread().get(row.trace()))))
                    continue;
                List<String> frames = p.traceFrames().get(row.trace());
                // (or in the virtual thread's own start-up: JDK 25 gave one sample whose top frame
                // was VirtualThread.run, before the task's first line ran; or in Thread.sleep
                // before it reaches the virtual thread: JDK 21 gave one in Thread.beforeSleep)
                assertTrue(frames != null && (frames.get(0).startsWith("java.lang.VirtualThread.run")
                                || frames.stream().anyMatch(f -> f.startsWith("java.lang.VirtualThread.park")
                                        || f.startsWith("java.lang.VirtualThread.sleep")
                                        || f.startsWith("java.lang.Thread.sleep")
                                        || f.startsWith("java.lang.VirtualThread.scheduleUnpark")
                                        // the unpark timer's pool starting its thread (JDK 21, CI;
                                        // VirtualThread.scheduleUnpark is below depth=8 there)
                                        || f.startsWith("java.util.concurrent.ScheduledThreadPoolExecutor"))),
                        "a sample of " + idle + " outside parking: " + row + "\n" + p.text());
            }
        }
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void intervalSetsTheRoundRateAndWhatOneSampleIsWorth(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-interval");
        int interval = 50;
        // Rounds are the safepoint sampler's (the async sampler's rate is checked below).
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,sampler=safepoint,thread=y,verbose=y,cutoff=0,interval=" + interval + ",file=cpu.txt")),
                "CpuBusy", "3000");
        Matcher m = Pattern.compile("(\\d+) rounds over ([0-9.]+) s \\(([0-9.]+) rounds/s").matcher(r.err());
        assertTrue(m.find(), r.describe());
        double perSecond = Double.parseDouble(m.group(3));
        assertTrue(perSecond >= 14 && perSecond <= 20.5, "interval=50 means 20 rounds/s: " + r.err());
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        long busySamples = p.byThread().getOrDefault("busy", 0L);
        double ratio = (double) busySamples * interval / busyCpuMs(r);
        assertTrue(ratio > 0.7 && ratio < 1.3, busySamples + " samples of " + interval + " ms, " + r.out());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void busyNativeCodeCountsButBlockedNativeCodeDoesNot(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-native");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,thread=y,interval=5,cutoff=0,file=cpu.txt")),
                "CpuBusy", "3000", "native");
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        Map<String, Long> byThread = p.byThread();
        long nativeBusy = byThread.getOrDefault("native-busy", 0L);
        // The top Java frame: zlib's function is on top of it ("[libz.so.1].deflate", issue 28).
        long deflate = p.rows().stream()
                .filter(row -> p.traceFrames().get(row.trace()).stream()
                        .filter(f -> !f.startsWith("[lib")).findFirst()
                        .orElse("").startsWith("java.util.zip.Deflater."))
                .mapToLong(Profile.Row::count).sum();
        long busy = byThread.getOrDefault("busy", 0L);
        // Both threads want a CPU all the time; each gets a fair share of it.
        assertTrue(nativeBusy >= busy * 0.3, byThread + "\n" + p.text());
        assertTrue(deflate >= nativeBusy * 0.8, "Deflater's native code is where it works\n" + p.text());
        assertTrue(byThread.getOrDefault("idle-socket", 0L) <= 1, p.text());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void cutoffLeavesOutSmallRowsButNotTheirSamples(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-cutoff");
        Jvm.Result r = Jvm.runClean(jdk, dir, List.of(Jvm.agentpath("cpu=samples,cutoff=0.1,file=cpu.txt")),
                "CpuBusy", "1500");
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        assertFalse(p.rows().isEmpty(), p.text());
        for (Profile.Row row : p.rows())
            assertTrue(row.self() >= 10.0, "row below the cutoff: " + row + "\n" + p.text());
        assertTrue(p.rows().stream().anyMatch(row -> row.method().equals("CpuBusy.hotA")), p.text());
        // thread=n: traces carry no thread.
        assertTrue(p.traceThread().isEmpty(), p.text());
        // Every row's trace is written (before the rows or at the end of the dump).
        for (Profile.Row row : p.rows())
            assertTrue(p.traceFrames().containsKey(row.trace()), "no TRACE " + row.trace() + "\n" + p.text());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void manyThreadsStartingAndEndingWhileSamplingEveryMillisecond(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-churn");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,thread=y,interval=1,depth=8,cutoff=0,file=cpu.txt")),
                "ThreadChurn", "3000");
        Matcher m = Pattern.compile("churn started (\\d+)").matcher(r.out());
        assertTrue(m.find(), r.describe());
        assertTrue(Long.parseLong(m.group(1)) >= 100, r.describe());
        Profile p = Profile.read(dir.resolve("cpu.txt"));
        assertEquals(p.total(), p.sumOfRows(), p.text());
        Map<String, Long> byThread = p.byThread(); // every trace names a started thread
        assertTrue(byThread.keySet().stream().anyMatch(n -> n.startsWith("short-")), byThread.toString());
        assertTrue(byThread.keySet().stream().anyMatch(n -> n.startsWith("live-")), byThread.toString());
        assertTrue(p.rows().stream().anyMatch(row -> row.method().equals("ThreadChurn.work")
                && p.threadNames().get(p.traceThread().get(row.trace())).startsWith("short-")), p.text());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void attachedSamplerCountsFromTheAttach(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-attach");
        Process p = new ProcessBuilder(jdk.resolve("bin/java").toString(), "-cp", Jvm.programs().toString(),
                "CpuBusy", "4000")
                .directory(dir.toFile()).redirectOutput(dir.resolve("out.txt").toFile())
                .redirectError(dir.resolve("err.txt").toFile()).start();
        try {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!Files.readString(dir.resolve("out.txt")).contains("cpu-busy ready")) {
                assertTrue(System.nanoTime() < deadline && p.isAlive(), Files.readString(dir.resolve("err.txt")));
                Thread.sleep(50);
            }
            AttachTest.Target t = new AttachTest.Target(p, dir, dir.resolve("unused"));
            Jvm.Result r = AttachTest.jcmd(jdk, t, "JVMTI.agent_load", Jvm.lib().toString(),
                    "\"cpu=samples,thread=y,cutoff=0,file=" + dir.resolve("cpu.txt") + "\"");
            assertTrue(r.out().contains("return code: 0"), r.describe());
            assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "target did not exit");
        } finally {
            p.destroyForcibly();
        }
        assertEquals(0, p.exitValue(), Files.readString(dir.resolve("err.txt")));
        Profile prof = Profile.read(dir.resolve("cpu.txt"));
        long a = prof.count("busy", "CpuBusy.hotA"), b = prof.count("busy", "CpuBusy.hotB");
        assertTrue(a + b >= 20 && a > b, a + " vs " + b + "\n" + prof.text());
        long idle = prof.byThread().entrySet().stream().filter(e -> e.getKey().startsWith("idle-"))
                .mapToLong(Map.Entry::getValue).sum();
        assertTrue(idle <= 2, prof.byThread() + "\n" + prof.text());
    }

    /** One CPU SAMPLES record of a socket stream, and the CONTROL SETTINGS flags before it. */
    record Samples(long total, Map<Long, Long> byTrace, int controlFlags) {}

    /** The k-th CPU SAMPLES record (from 1), once it has arrived. */
    static Samples cpuSamples(NetTest.Peer peer, int k) throws Exception {
        NetTest.await(() -> NetTest.withTag(NetTest.completeRecords(peer.received()), 0x0D).size() >= k,
                "CPU SAMPLES record " + k, 60_000);
        List<NetTest.Rec> recs = NetTest.completeRecords(peer.received());
        int seen = 0, flags = -1;
        for (NetTest.Rec r : recs) {
            if (r.tag() == 0x0E)
                flags = r.buf().getInt();
            if (r.tag() == 0x0D && ++seen == k) {
                java.nio.ByteBuffer b = r.buf();
                long total = b.getInt() & 0xFFFFFFFFL;
                int n = b.getInt();
                Map<Long, Long> rows = new HashMap<>();
                for (int i = 0; i < n; i++) {
                    long count = b.getInt() & 0xFFFFFFFFL;
                    rows.put(b.getInt() & 0xFFFFFFFFL, count);
                }
                return new Samples(total, rows, flags);
            }
        }
        throw new AssertionError("unreachable");
    }

    /** Asks for CPU SAMPLES (the k[0]+1-th answer) until the thread of serial has samples in it
     * or 30 s passed, one second apart; returns the last answer. */
    static Samples askUntil(NetTest.Peer peer, int[] k, long serial) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            k[0]++;
            peer.send(NetTest.cmd(NetTest.CPU_SAMPLES, 100 + k[0], NetTest.cat(NetTest.u2(0), NetTest.f4(0f))));
            Samples got = cpuSamples(peer, k[0]);
            if (perThread(got, traceThreads(peer.received())).getOrDefault(serial, 0L) > 0
                    || System.nanoTime() > deadline)
                return got;
            Thread.sleep(1000);
        }
    }

    /** Thread serial of each trace (STACK TRACE records), and of each thread object (START THREAD). */
    static Map<Long, Long> traceThreads(byte[] stream) {
        Map<Long, Long> m = new HashMap<>();
        for (NetTest.Rec r : NetTest.withTag(NetTest.completeRecords(stream), 0x05)) {
            java.nio.ByteBuffer b = r.buf();
            long trace = b.getInt() & 0xFFFFFFFFL;
            m.put(trace, b.getInt() & 0xFFFFFFFFL);
        }
        return m;
    }

    static long threadSerial(byte[] stream, long objectId) {
        for (NetTest.Rec r : NetTest.withTag(NetTest.completeRecords(stream), NetTest.TAG_START_THREAD)) {
            java.nio.ByteBuffer b = r.buf();
            long serial = b.getInt() & 0xFFFFFFFFL;
            if (b.getLong() == objectId)
                return serial;
        }
        throw new AssertionError("no START THREAD for object " + Long.toHexString(objectId));
    }

    /** Samples per thread serial in one CPU SAMPLES record. */
    static Map<Long, Long> perThread(Samples s, Map<Long, Long> traceThread) {
        Map<Long, Long> m = new HashMap<>();
        s.byTrace().forEach((trace, count) -> m.merge(traceThread.get(trace), count, Long::sum));
        return m;
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void socketControlSwitchesSamplingPerThreadAndClears(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-control");
        byte[] dumpAll = NetTest.cmd(NetTest.CPU_SAMPLES, 0, NetTest.cat(NetTest.u2(0), NetTest.f4(0f)));
        try (NetTest.Peer peer = NetTest.Peer.loopback()) {
            Process p = new ProcessBuilder(jdk.resolve("bin/java").toString(),
                    Jvm.agentpath("cpu=samples,thread=y,interval=5,format=b,net=127.0.0.1:" + peer.port()),
                    "-cp", Jvm.programs().toString(), "CpuPair", dir.resolve("stop").toString())
                    .directory(dir.toFile()).redirectOutput(dir.resolve("out.txt").toFile())
                    .redirectError(dir.resolve("err.txt").toFile()).start();
            try {
                peer.accept(true);
                NetTest.await(() -> NetTest.read(dir.resolve("out.txt")).contains("pair ready"), "pair ready", 60_000);
                Thread.sleep(500);
                // Off for all, then clear: nothing is counted any more.
                peer.send(NetTest.control(1, 4, NetTest.u8(0)));
                peer.send(NetTest.control(2, 5));
                Thread.sleep(1000);
                peer.send(NetTest.cmd(NetTest.CPU_SAMPLES, 3, NetTest.cat(NetTest.u2(0), NetTest.f4(0f))));
                Samples off = cpuSamples(peer, 1);
                assertEquals(0, off.total(), off.toString());
                assertEquals(0, off.controlFlags() & 0x2, "cpu sampling bit while off");

                byte[] sofar = peer.received();
                long a = NetTest.threadObjectId(sofar, "busy-a"), b = NetTest.threadObjectId(sofar, "busy-b");
                long serialA = threadSerial(sofar, a), serialB = threadSerial(sofar, b);
                // On for busy-a only. Each check that a busy thread was sampled asks again (its
                // counts only grow until a clear) until it was or 30 s passed: on a loaded
                // machine a busy thread may not run at all for a second.
                int[] k = {1};
                peer.send(NetTest.control(4, 3, NetTest.u8(a)));
                Thread.sleep(1500);
                Samples onlyA = askUntil(peer, k, serialA);
                Map<Long, Long> threadsA = perThread(onlyA, traceThreads(peer.received()));
                assertTrue(threadsA.getOrDefault(serialA, 0L) > 0, threadsA.toString());
                assertEquals(Set.of(serialA), threadsA.keySet(), "only busy-a is sampled: " + threadsA);
                assertEquals(0x2, onlyA.controlFlags() & 0x2, "cpu sampling bit with one thread on");

                // On for all, then off for busy-a and clear: busy-b only.
                peer.send(NetTest.control(6, 3, NetTest.u8(0)));
                Thread.sleep(1000);
                Samples all = askUntil(peer, k, serialB);
                Map<Long, Long> threadsAll = perThread(all, traceThreads(peer.received()));
                assertTrue(threadsAll.getOrDefault(serialB, 0L) > 0, threadsAll.toString());
                assertTrue(all.total() > onlyA.total(), "counts accumulate until cleared");
                peer.send(NetTest.control(7, 4, NetTest.u8(a)));
                peer.send(NetTest.control(8, 5));
                Thread.sleep(1500);
                Samples onlyB = askUntil(peer, k, serialB);
                Map<Long, Long> threadsB = perThread(onlyB, traceThreads(peer.received()));
                assertEquals(0, threadsB.getOrDefault(serialA, 0L), threadsB.toString());
                assertTrue(threadsB.getOrDefault(serialB, 0L) > 0, threadsB.toString());

                Files.writeString(dir.resolve("stop"), "");
                assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "target did not exit");
                assertEquals(0, p.exitValue(), NetTest.read(dir.resolve("err.txt")));
                byte[] stream = peer.awaitEnd(60_000);
                HprofRead.Report report = HprofRead.check(NetTest.save(dir, stream));
                assertEquals(0, report.exit(), report.output());
                assertEquals(k[0] + 1, report.count("CPU SAMPLES"), report.output()); // commands + exit
            } finally {
                p.destroyForcibly();
            }
        }
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void binaryCpuSamplesPassTheStrictReader(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("cpu-binary");
        Path file = dir.resolve("cpu.hprof");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("cpu=samples,heap=sites,thread=y,depth=6,format=b,file=" + file)),
                "CpuBusy", "1500");
        HprofRead.Report report = HprofRead.check(file);
        assertEquals(0, report.exit(), report.output());
        assertEquals(1, report.count("CPU SAMPLES"), report.output());
        assertEquals(1, report.count("CONTROL SETTINGS"), report.output());
        // alloc traces (heap=sites) | cpu sampling, and the depth.
        assertEquals(3L, report.get("control_settings", "flags"), report.output());
        assertEquals(6L, report.get("control_settings", "depth"), report.output());
        long total = (Long) report.get("cpu_samples", "total");
        assertTrue(total > 0, report.output());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> top = (List<Map<String, Object>>) report.get("cpu_samples", "top");
        assertTrue(((String) top.get(0).get("frame")).startsWith("CpuBusy.hotA("), report.output());
    }
}
