package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** wall=y on real VMs: shares of a thread's wall time by state, samples per second of life, binary output. */
class WallSamplesTest {
    static long number(Jvm.Result r, String regex) {
        Matcher m = Pattern.compile(regex).matcher(r.out() + r.err());
        assertTrue(m.find(), regex + " not in\n" + r.describe());
        return Long.parseLong(m.group(1));
    }

    /** Samples per phase of the request thread (read: in the socket read; compute; lock: entering the
     *  monitor), per thread name, and the state pseudo-frames seen. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void requestSharesFollowItsPhasesAndSamplesFollowLife(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("wall-mix");
        int interval = 2; // about 1500 samples of the request thread: a share's spread about 1.3 points
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("wall=y,thread=y,depth=12,cutoff=0,wall_interval=" + interval + ",file=wall.txt")),
                "WallMix", "3000");
        AsciiProfile a = AsciiProfile.read(dir.resolve("wall.txt"));
        AsciiProfile.Section s = a.section("WALL SAMPLES", 0);
        assertTrue(a.sections("CPU SAMPLES").isEmpty(), "wall=y alone writes no CPU SAMPLES\n" + a.text);

        Map<String, Long> byThread = new HashMap<>();
        long read = 0, compute = 0, lock = 0, request = 0, sum = 0, readNative = 0, lockBlocked = 0;
        for (AsciiProfile.Row row : s.rows()) {
            long n = row.number(0);
            int trace = (int) row.number(1);
            List<String> m = a.trace(trace).methods();
            assertTrue(!m.isEmpty() && m.get(0).startsWith("<wall>."), "state pseudo-frame on top: " + m);
            String thread = a.threadOf(trace);
            byThread.merge(thread, n, Long::sum);
            sum += n;
            if (!"request".equals(thread))
                continue;
            request += n;
            String state = m.get(0);
            if (m.contains("WallMix.compute")) {
                compute += n;
            } else if (m.contains("WallMix.lockPhase")) {
                lock += n;
                if (state.equals("<wall>.blocked"))
                    lockBlocked += n;
            } else if (m.contains("WallMix.readPhase")) {
                read += n;
                if (state.equals("<wall>.native"))
                    readNative += n;
            }
        }
        assertEquals(s.total(), sum, "cutoff=0 writes every row\n" + a.text);

        // Rate: one sample per interval of the "short" thread's life (ThreadStart to ThreadEnd), whatever
        // it did (it slept). That life lies between its run() as it timed itself and main's start() to
        // join(): within 5% of that bracket (on an idle machine both are about 1000 ms).
        long runMs = number(r, "short-life-ms (\\d+)"), outerMs = number(r, "short-start-to-join-ms (\\d+)");
        long shortSamples = byThread.getOrDefault("short", 0L);
        String life = "short: run() " + runMs + " ms, start() to join() " + outerMs + " ms, " + shortSamples
                + " samples of " + interval + " ms\n" + byThread;
        assertTrue(shortSamples >= 0.95 * runMs / interval, life);
        assertTrue(shortSamples <= 1.05 * outerMs / interval, life);
        // The request thread's compute phase runs Java code: its new stacks are asked by signal and walked
        // by the thread itself (wall_signals.c), not by a GetStackTrace handshake; a silent fall back to
        // the handshake for every thread would cost five times more (doc/wall-samples.md, "Cost").
        long bySignal = number(r, "stacks asked by signal: (\\d+) walked by the thread itself");
        assertTrue(bySignal > 0, "no stack walked by signal\n" + r.describe());
        // The samples stand for fixed intervals only if the sampler kept its schedule: on a machine so
        // loaded that it missed more than a fifth of its ticks (a handshake with a descheduled thread),
        // the shares are not judged (reported as aborted, not passed).
        long ticks = number(r, "in (\\d+) ticks over"), missed = number(r, "ticks over [0-9.]+ s \\((\\d+) skipped\\)");
        Assumptions.assumeTrue(missed * 5 <= ticks + missed,
                "the wall sampler missed " + missed + " of " + (ticks + missed) + " ticks: machine too loaded to judge shares");
        long readMs = number(r, "phase-ms read (\\d+)"), computeMs = number(r, "compute (\\d+)"),
                lockMs = number(r, "lock (\\d+)");
        double phases = readMs + computeMs + lockMs;
        assertTrue(request >= 200, "too few request samples to judge: " + byThread + "\n" + a.text);
        String shares = String.format("samples read %d compute %d lock %d of %d; measured ms read %d compute %d lock %d",
                read, compute, lock, request, readMs, computeMs, lockMs);
        assertTrue(Math.abs((double) read / request - readMs / phases) <= 0.05, shares + "\n" + a.text);
        assertTrue(Math.abs((double) compute / request - computeMs / phases) <= 0.05, shares + "\n" + a.text);
        assertTrue(Math.abs((double) lock / request - lockMs / phases) <= 0.05, shares + "\n" + a.text);
        // What the phases wait in: the read in the socket (native), the lock phase mostly blocked on entry
        // (the rest: parked until the holder has the monitor, longer when the machine is loaded).
        assertTrue(readNative >= 0.9 * read, "read phase: " + readNative + " of " + read + " native\n" + a.text);
        assertTrue(lockBlocked >= 0.6 * lock, "lock phase: " + lockBlocked + " of " + lock + " blocked\n" + a.text);

        assertTrue(a.grep("<wall>.sleeping").length() > 0, a.text);
    }

    /** format=b with cpu=samples too: the wall record is a CPU SAMPLES record with <wall> traces, before
     *  cpu=samples' own; the strict reader accepts the file. wall_states keeps only what is asked. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void binaryWithCpuSamplesAndStateFilter(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("wall-binary");
        Jvm.Result r = Jvm.runClean(jdk, dir,
                List.of(Jvm.agentpath("wall=y,cpu=samples,format=b,wall_states=native+blocked,file=wall.hprof")),
                "WallMix", "1000");
        HprofRead.Report rep = HprofRead.check(dir.resolve("wall.hprof"));
        assertEquals(0, rep.exit(), rep.output());
        assertEquals(2, rep.count("CPU SAMPLES"), "wall's record and cpu=samples'\n" + rep.output());
        // hprof-convert tells the wall record by its <wall> frames: collapsed stacks end in the state.
        Jvm.Result c = Jvm.exec(List.of(Jvm.env("HPROF_CONVERT"), "--kind", "wall", "wall.hprof"), dir, Map.of(), 120);
        assertEquals(0, c.exit(), c.describe());
        long native_ = 0, blocked = 0;
        for (String line : c.out().split("\n")) {
            if (line.isBlank())
                continue;
            assertTrue(line.matches(".*;?<wall>\\.(native|blocked) \\d+"), "only the states kept: " + line + "\n" + c.out());
            long n = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
            if (line.contains("SocketDispatcher.read0;<wall>.native"))
                native_ += n;
            if (line.contains("WallMix.enterLock;<wall>.blocked"))
                blocked += n;
        }
        // The request thread: 1 s at 20 ms is 50 samples, half of them in the read, a fifth blocked.
        assertTrue(native_ >= 15 && blocked >= 5, "read " + native_ + ", blocked " + blocked + "\n" + c.out());
        Jvm.Result cpu = Jvm.exec(List.of(Jvm.env("HPROF_CONVERT"), "--kind", "samples", "wall.hprof"), dir, Map.of(), 120);
        assertEquals(0, cpu.exit(), cpu.describe());
        assertTrue(!cpu.out().contains("<wall>"), "cpu=samples' record is read as CPU SAMPLES\n" + cpu.out());
    }

    /** JDK 21+: virtual threads are sampled as threads of their own (VirtualThreadStart to
     *  VirtualThreadEnd), sleeping and parked ones with their state, more of them than one tick visits
     *  (round-robin); carriers are left out. One sample per interval of each one's life. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#virtualThreadJdks")
    void virtualThreadsAreSampledWithTheirStates(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("wall-virtual");
        int n = 100, interval = 10; // 201 virtual threads: above the 128 visits of a tick
        Jvm.Result r = Jvm.runClean(jdk, dir,
                // Four carriers: vcompute holds one for good, the nappers wake on the others.
                List.of("-Djdk.virtualThreadScheduler.parallelism=4",
                        Jvm.agentpath("wall=y,thread=y,depth=8,cutoff=0,wall_interval=" + interval + ",file=wall.txt")),
                "WallVirtual", String.valueOf(n), "2000");
        AsciiProfile a = AsciiProfile.read(dir.resolve("wall.txt"));
        AsciiProfile.Section s = a.section("WALL SAMPLES", 0);
        Map<String, Long> byThread = new HashMap<>();
        long sleep = 0, sleeping = 0, parked = 0, compute = 0, running = 0, virtual = 0;
        for (AsciiProfile.Row row : s.rows()) {
            long c = row.number(0);
            int trace = (int) row.number(1);
            List<String> m = a.trace(trace).methods();
            String thread = a.threadOf(trace), state = m.get(0);
            byThread.merge(thread, c, Long::sum);
            assertTrue(!thread.startsWith("ForkJoinPool-1-worker"), "a carrier sampled: " + thread + "\n" + a.text);
            if (!thread.startsWith("v"))
                continue;
            virtual += c;
            for (String f : m)
                assertTrue(!f.startsWith("java.util.concurrent.ForkJoin") && !f.contains("runContinuation"),
                        "carrier frame in a virtual thread's trace: " + m + "\n" + a.text);
            // A sleeping virtual thread is a timed park (JDK 21) or sleeping; one woken but not yet on a
            // carrier is runnable (with vcompute holding one of the carriers, often so on a loaded machine).
            boolean waits = state.equals("<wall>.parked") || state.equals("<wall>.sleeping");
            if (thread.startsWith("vsleep-") || thread.startsWith("vpark-")) {
                sleep += c;
                sleeping += waits ? c : 0;
                parked += waits || state.equals("<wall>.runnable") ? c : 0;
            } else if (thread.equals("vcompute")) {
                compute += c;
                running += state.equals("<wall>.running") && m.contains("WallVirtual.compute") ? c : 0;
            }
        }
        long vthreads = byThread.keySet().stream().filter(t -> t.matches("v(sleep|park)-\\d+|vcompute")).count();
        assertEquals(2 * n + 1, vthreads, "every virtual thread has samples: " + byThread.keySet());
        String states = "napping threads: parked or sleeping " + sleeping + ", and runnable " + parked + " of " + sleep
                + "; vcompute running " + running + " of " + compute;
        assertTrue(sleeping >= 0.5 * sleep && parked >= 0.9 * sleep && running >= 0.7 * compute, states + "\n" + a.text);
        // Rate: their summed lives lie between what their run() measured and main's start() to join().
        long lives = number(r, "virtual-lives-ms (\\d+)"), brackets = number(r, "brackets-ms (\\d+)");
        String rate = virtual + " samples of " + interval + " ms; lives " + lives + " ms, brackets " + brackets + " ms";
        assertTrue(virtual >= 0.9 * lives / interval && virtual <= 1.1 * brackets / interval, rate);
    }

    /** Socket CONTROL: sampling off for all and clear gives an empty WALL SAMPLES, on again counts again
     *  (and no sample stands for the time it was off); ascii over the socket. */
    @Test
    void socketControlStopsStartsAndClears() throws Exception {
        Path dir = Jvm.workDir("wall-control");
        try (NetTest.Peer peer = NetTest.Peer.loopback();
             NetTest.Target t = NetTest.Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("wall=y,net=127.0.0.1:" + peer.port())), "quiet")) {
            peer.accept(true);
            t.awaitOut("target ready");
            peer.send(NetTest.control(1, 4, NetTest.u8(0))); // cpu sampling off, all threads
            peer.send(NetTest.control(2, 5));                // clear
            Thread.sleep(600);
            peer.send(NetTest.cmd(NetTest.CPU_SAMPLES, 3, NetTest.cat(NetTest.u2(0), NetTest.f4(0f))));
            t.awaitErr(NetTest.dumpDone(peer), 1);
            peer.send(NetTest.control(4, 3, NetTest.u8(0))); // on again
            long on = System.nanoTime();
            Thread.sleep(600);
            peer.send(NetTest.cmd(NetTest.CPU_SAMPLES, 5, NetTest.cat(NetTest.u2(0), NetTest.f4(0f))));
            t.awaitErr(NetTest.dumpDone(peer), 2);
            long onMs = (System.nanoTime() - on) / 1_000_000;
            peer.send(NetTest.cmd(NetTest.EXIT_VM, 6));
            Jvm.Result r = t.await(60);
            String text = new String(peer.awaitEnd(30_000), StandardCharsets.UTF_8);
            List<Long> totals = Pattern.compile("WALL SAMPLES BEGIN \\(total = (\\d+)\\)").matcher(text).results()
                    .map(m -> Long.parseLong(m.group(1))).toList();
            assertEquals(3, totals.size(), "two commands and the exit dump\n" + r.describe() + text);
            assertEquals(0L, totals.get(0), "off and cleared\n" + text);
            // On for about onMs: each live thread (main sleeping in NetTarget, the VM's own) gets one
            // sample per 20 ms of it, none for the 600 ms it was off before.
            int threads = threadsOf(text);
            assertTrue(totals.get(1) > 0, text);
            assertTrue(totals.get(1) <= (long) threads * (onMs / 20 + 2), totals + " for " + threads + " threads on "
                    + onMs + " ms\n" + text);
            assertTrue(totals.get(2) >= totals.get(1), "counts accumulate until cleared: " + totals);
        }
    }

    static int threadsOf(String text) {
        return NetTest.count(text, "THREAD START (obj=");
    }
}
