package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import hprof.tests.SitesReport.Dump;
import hprof.tests.SitesReport.Site;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * heap=sites on real VMs: exact allocated and live counts per site from SitesProgram (whose
 * counts are known), ascii and binary, on JDK 17 and 25; the options that shape sites
 * (thread, lineno, depth, cutoff, sites_interval); a dump on SIGQUIT; threads allocating
 * while class loaders are dropped.
 */
class HeapSitesTest {
    static final String P = "SitesProgram";
    static final String ITEM = "SitesProgram$Item", WORK = "SitesProgram$Work";
    // The program's counts (SitesProgram's constants).
    static final int ITEMS_A = 6000, ITEMS_B = 4000, KEPT_A = 1000, KEPT_B = 234;
    static final int MORE = 777, MORE_KEPT = 77, INTS = 5000, INTS_KEPT = 500, GRIDS = 300;
    static final int THREADS = 4, WORK_N = 2500, WORK_KEPT = 111, CLONES = 400, REFLECTED = 250;
    static final int MOVED_A1 = 100, KEPT_A1 = 50, MOVED_B = 80_000, KEPT_B2 = 5000;
    static final int MOVED_A2 = 1000, KEPT_A2 = 100, PAIRS = 3000, PAIRS_KEPT = 300;
    static final String MOVED = "SitesProgram$Moved", PAIR = "SitesProgram$Pair";

    static Jvm.Result run(Path jdk, Path dir, String options, String main, String... args)
        throws Exception {
        Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath(options)), main, args);
        assertEquals(0, r.exit(), r.describe());
        assertFalse(r.err().contains("A fatal error has been detected"), r.describe());
        assertFalse(r.err().contains("HPROF ERROR"), r.describe());
        return r;
    }

    static SitesReport ascii(Path dir) throws Exception {
        return SitesReport.ascii(dir.resolve("java.hprof.txt"));
    }

    /** One row, with its counts; bytes must be a whole number of objects of one size. */
    static Site one(SitesReport r, Dump d, String cls, String topMethod) {
        List<Site> rows = r.rowsAtTop(d, cls, topMethod);
        assertEquals(1, rows.size(),
                     "rows of " + cls + " at " + topMethod + ":\n" +
                         r.describe(d, s -> s.cls().equals(cls)));
        return rows.get(0);
    }

    static void assertCounts(Site s, long alloc, long live) {
        assertEquals(alloc, s.allocObjs(), "allocated objects of " + s);
        assertEquals(live, s.liveObjs(), "live objects of " + s);
        assertTrue(alloc > 0 && s.allocBytes() % alloc == 0,
                   "allocated bytes not a whole number of objects: " + s);
        long size = s.allocBytes() / alloc;
        assertEquals(live * size, s.liveBytes(), "live bytes != live objects * " + size + ": " + s);
    }

    /** Every count the program makes, in one dump. */
    static void assertProgramCounts(SitesReport r, Dump d, boolean perThread) {
        Site a = one(r, d, ITEM, P + ".makeItems");
        long size = a.allocBytes() / a.allocObjs();
        assertTrue(size >= 16 && size <= 48, "Item size " + size);
        List<Site> items = r.rowsAtTop(d, ITEM, P + ".makeItems");
        assertEquals(1, items.size());
        assertCounts(a, ITEMS_A + ITEMS_B, KEPT_A + KEPT_B);
        assertCounts(one(r, d, ITEM, P + ".makeMoreItems"), MORE, MORE_KEPT);
        assertCounts(one(r, d, "int[]", P + ".makeArrays"), INTS, INTS_KEPT);
        assertCounts(one(r, d, "java.lang.String[][]", P + ".makeArrays"), GRIDS, GRIDS);
        // Every Item allocated, from any site (clone and reflection allocate in JDK frames).
        List<Site> all = d.sites().stream().filter(s -> s.cls().equals(ITEM)).toList();
        assertEquals(ITEMS_A + ITEMS_B + MORE + CLONES + REFLECTED,
                     SitesReport.sum(all, Site::allocObjs),
                     r.describe(d, s -> s.cls().equals(ITEM)));
        assertEquals(KEPT_A + KEPT_B + MORE_KEPT + CLONES + REFLECTED,
                     SitesReport.sum(all, Site::liveObjs));
        for (Site s : all)
            assertCounts(s, s.allocObjs(), s.liveObjs());
        // Two allocations on one line are one site (one frame per line, lineno=y or n).
        assertCounts(one(r, d, PAIR, P + ".makePairs"), 2 * PAIRS, 2 * PAIRS_KEPT);
        // A class whose default site moved from moveA to moveB while objects of both lived.
        assertCounts(one(r, d, MOVED, P + ".moveA"), MOVED_A1 + MOVED_A2, KEPT_A1 + KEPT_A2);
        assertCounts(one(r, d, MOVED, P + ".moveB"), MOVED_B, KEPT_B2);
        List<Site> work = r.rowsAtTop(d, WORK, P + ".work");
        if (!perThread) {
            assertEquals(1, work.size(), r.describe(d, s -> s.cls().equals(WORK)));
            assertCounts(work.get(0), THREADS * WORK_N, THREADS * WORK_KEPT);
        } else {
            assertEquals(THREADS, work.size(), r.describe(d, s -> s.cls().equals(WORK)));
            Set<Integer> threads = new HashSet<>();
            for (Site s : work) {
                assertCounts(s, WORK_N, WORK_KEPT);
                int thread = r.trace(s).thread();
                assertTrue(threads.add(thread), "one trace per thread");
                assertTrue(r.threadNames.getOrDefault(thread, "?").startsWith("worker-"),
                           "thread " + thread + " is " + r.threadNames.get(thread));
            }
        }
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void exactCountsAscii(int feature) throws Exception {
        Path dir = Jvm.workDir("sites-ascii");
        Jvm.Result res = Jvm.run(Jvm.jdkOrSkip(feature), dir, Jvm.envWith("HPROF_SITES_STATS", "1"),
                List.of(Jvm.agentpath("heap=sites,cutoff=0,lineno=n")), P);
        assertEquals(0, res.exit(), res.describe());
        // The default site of Moved did move (the counts below are checked across the move).
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("default moves (\\d+)").matcher(res.err());
        assertTrue(m.find() && Long.parseLong(m.group(1)) > 0, res.err());
        SitesReport r = ascii(dir);
        assertEquals(1, r.dumps.size());
        assertProgramCounts(r, r.last(), false);
        // Sorted by live bytes, largest first.
        List<Site> rows = r.last().sites();
        for (int i = 1; i < rows.size(); i++)
            assertTrue(rows.get(i - 1).liveBytes() >= rows.get(i).liveBytes(), "order at row " + i);
    }

    /* The AsyncGetCallTrace diagnostic (doc/heap-sites.md, "Mechanism"): AGCT is found on both
     * JDKs and walks some allocations, and the counts stay exact, since what is recorded is
     * always GetStackTrace's stack. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void agctCheckKeepsCountsExact(int feature) throws Exception {
        Path dir = Jvm.workDir("sites-agct");
        Jvm.Result res = Jvm.run(Jvm.jdkOrSkip(feature), dir, Jvm.envWith("HPROF_SITES_AGCT_CHECK", "1"),
                List.of(Jvm.agentpath("heap=sites,cutoff=0,lineno=n")), P);
        assertEquals(0, res.exit(), res.describe());
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("AGCT check: (\\d+) stacks compared, (\\d+) differ; AGCT declined (\\d+)")
                .matcher(res.err());
        assertTrue(m.find(), res.err());
        assertTrue(Long.parseLong(m.group(1)) > 0, "AGCT walked no stack: " + m.group());
        SitesReport r = ascii(dir);
        assertEquals(1, r.dumps.size());
        assertProgramCounts(r, r.last(), false);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void exactCountsBinary(int feature) throws Exception {
        Path dir = Jvm.workDir("sites-binary");
        run(Jvm.jdkOrSkip(feature), dir, "heap=sites,format=b,cutoff=0,lineno=n", P);
        SitesReport r = SitesReport.binary(dir.resolve("java.hprof"));
        assertEquals(1, r.dumps.size());
        Dump d = r.last();
        assertProgramCounts(r, d, false);
        assertEquals(10, one(r, d, "int[]", P + ".makeArrays").arrayType(),
                     "int[] array indicator");
        assertEquals(2, one(r, d, "java.lang.String[][]", P + ".makeArrays").arrayType());
        assertEquals(0, one(r, d, ITEM, P + ".makeMoreItems").arrayType());
        // Totals: over every site (cutoff=0 shows them all).
        assertEquals(SitesReport.sum(d.sites(), Site::liveBytes), d.totalLiveBytes());
        assertEquals(SitesReport.sum(d.sites(), Site::liveObjs), d.totalLiveObjs());
        assertEquals(SitesReport.sum(d.sites(), Site::allocObjs), d.totalAllocObjs());
        assertEquals(1, r.summaries.size(), "one HEAP SUMMARY");
        long[] sum = r.summaries.get(0);
        assertEquals(d.totalLiveBytes(), sum[0]);
        assertEquals(d.totalLiveObjs(), sum[1]);
        assertEquals(d.totalAllocBytes(), sum[2]);
        assertEquals(d.totalAllocObjs(), sum[3]);
    }

    @Test void linesSplitSitesUnlessLinenoN() throws Exception {
        Path dir = Jvm.workDir("sites-lineno");
        run(Jvm.defaultJdk(), dir, "heap=sites,cutoff=0", P);
        SitesReport r = ascii(dir);
        Dump d = r.last();
        List<Site> rows = r.rowsAtTop(d, ITEM, P + ".makeItems");
        assertEquals(2, rows.size(), r.describe(d, s -> s.cls().equals(ITEM)));
        Site a = rows.stream().filter(s -> s.allocObjs() == ITEMS_A).findFirst().orElseThrow();
        Site b = rows.stream().filter(s -> s.allocObjs() == ITEMS_B).findFirst().orElseThrow();
        assertCounts(a, ITEMS_A, KEPT_A);
        assertCounts(b, ITEMS_B, KEPT_B);
        String lineA = r.trace(a).lines().get(0), lineB = r.trace(b).lines().get(0);
        assertTrue(lineA.matches("SitesProgram\\.makeItems\\(SitesProgram\\.java:\\d+\\)"), lineA);
        assertFalse(lineA.equals(lineB));
        // Two bytecodes of one line: one frame, one trace, one site.
        assertCounts(one(r, d, PAIR, P + ".makePairs"), 2 * PAIRS, 2 * PAIRS_KEPT);
        assertNoTwoTracesAlike(r);
    }

    /** Traces are what they print: no two TRACE records with the same thread and frames. */
    static void assertNoTwoTracesAlike(SitesReport r) {
        Map<List<Object>, Integer> seen = new HashMap<>();
        for (SitesReport.Trace t : r.traces.values()) {
            Integer other = seen.put(List.of(t.thread(), t.lines()), t.serial());
            assertNull(other, "TRACE " + other + " and TRACE " + t.serial() + " are alike: " + t);
        }
    }

    @Test void threadYGivesEachThreadItsOwnSites() throws Exception {
        Path dir = Jvm.workDir("sites-thread");
        run(Jvm.defaultJdk(), dir, "heap=sites,cutoff=0,lineno=n,thread=y", P);
        SitesReport r = ascii(dir);
        assertProgramCounts(r, r.last(), true);
        for (Site s : r.last().sites())
            assertTrue(r.trace(s).thread() > 0 || r.trace(s).methods().isEmpty(),
                       "trace without thread: " + s);
    }

    @Test void depthZeroPutsEverythingOnTheEmptyTrace() throws Exception {
        Path dir = Jvm.workDir("sites-depth0");
        run(Jvm.defaultJdk(), dir, "heap=sites,cutoff=0,depth=0", P);
        SitesReport r = ascii(dir);
        Dump d = r.last();
        for (Site s : d.sites())
            assertTrue(r.trace(s).methods().isEmpty(), "depth=0 but " + s + " has frames");
        List<Site> items = r.rows(d, ITEM, null);
        assertEquals(1, items.size());
        assertCounts(items.get(0), ITEMS_A + ITEMS_B + MORE + CLONES + REFLECTED,
                     KEPT_A + KEPT_B + MORE_KEPT + CLONES + REFLECTED);
        List<Site> work = r.rows(d, WORK, null);
        assertEquals(1, work.size());
        assertCounts(work.get(0), THREADS * WORK_N, THREADS * WORK_KEPT);
    }

    @Test void depth1000KeepsWholeStacks() throws Exception {
        Path dir = Jvm.workDir("sites-depth1000");
        run(Jvm.defaultJdk(), dir, "heap=sites,cutoff=0,lineno=n,depth=1000", P);
        SitesReport r = ascii(dir);
        Dump d = r.last();
        assertProgramCounts(r, d, false);
        Site a = one(r, d, ITEM, P + ".makeItems");
        assertEquals(List.of(P + ".makeItems", P + ".main"), r.trace(a).methods());
        Site w = one(r, d, WORK, P + ".work");
        List<String> m = r.trace(w).methods();
        assertEquals("java.lang.Thread.run", m.get(m.size() - 1), m.toString());
        // Reflection goes deep into the JDK; with the whole stack the caller is in it.
        List<Site> reflected = r.rows(d, ITEM, P + ".reflectItems");
        assertEquals(REFLECTED, SitesReport.sum(reflected, Site::allocObjs),
                     r.describe(d, s -> s.cls().equals(ITEM)));
    }

    @ParameterizedTest(name = "cutoff={0}")
    @ValueSource(strings = {"0", "0.05", "1"})
    void cutoffLeavesOutSmallRows(String cutoff) throws Exception {
        Path dir = Jvm.workDir("sites-cutoff");
        run(Jvm.defaultJdk(), dir, "heap=sites,lineno=n,cutoff=" + cutoff, P);
        SitesReport r = ascii(dir);
        List<Site> rows = r.last().sites();
        long total = SitesReport.sum(rows, Site::liveBytes);
        double c = Double.parseDouble(cutoff);
        if (c == 0) {
            assertTrue(rows.size() > 20, "cutoff=0 shows every site: " + rows.size());
            assertProgramCounts(r, r.last(), false);
        } else if (c >= 1) {
            assertTrue(rows.size() <= 1,
                       "cutoff=1 leaves at most a site holding everything: " + rows);
        } else {
            // Rows shown hold at least 5% of all live bytes, which exceed those shown.
            assertFalse(rows.isEmpty());
            for (Site s : rows)
                assertTrue(s.liveBytes() >= 0.05 * total * 0.999, s + " below 5% of " + total);
            assertTrue(rows.size() <= 20);
        }
    }

    @Test void signalDumpShowsLiveObjectsThenExitDumpShowsThemGone() throws Exception {
        Path dir = Jvm.workDir("sites-signal");
        run(Jvm.defaultJdk(), dir, "heap=sites,cutoff=0,lineno=n", P, "signal",
            dir.resolve("java.hprof.txt").toString());
        SitesReport r = ascii(dir);
        assertEquals(2, r.dumps.size(), "a SIGQUIT dump and the exit dump");
        assertProgramCounts(r, r.dumps.get(0), false);
        Dump exit = r.dumps.get(1);
        List<Site> items = r.rows(exit, ITEM, null);
        assertEquals(ITEMS_A + ITEMS_B + MORE + CLONES + REFLECTED,
                     SitesReport.sum(items, Site::allocObjs));
        assertEquals(0, SitesReport.sum(items, Site::liveObjs),
                     "freed objects reported live:\n" +
                         r.describe(exit, s -> s.cls().equals(ITEM)));
        assertCounts(one(r, exit, "int[]", P + ".makeArrays"), INTS, 0);
        assertEquals(0, SitesReport.sum(r.rows(exit, WORK, null), Site::liveObjs));
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void sampledModeWithIntervalOneIsExact(int feature) throws Exception {
        Path dir = Jvm.workDir("sites-interval1");
        run(Jvm.jdkOrSkip(feature), dir, "heap=sites,cutoff=0,lineno=n,sites_interval=1", P, "signal",
            dir.resolve("java.hprof.txt").toString());
        SitesReport r = ascii(dir);
        assertEquals(2, r.dumps.size());
        assertProgramCounts(r, r.dumps.get(0), false);
        // Live counts come from ObjectFree here: those pending at the dump must be settled.
        assertEquals(0, SitesReport.sum(r.rows(r.dumps.get(1), ITEM, null), Site::liveObjs));
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void sampledModeEstimatesVolume(int feature) throws Exception {
        Path dir = Jvm.workDir("sites-sampled");
        run(Jvm.jdkOrSkip(feature), dir, "heap=sites,cutoff=0,lineno=n,sites_interval=16384",
            "SitesVolume");
        SitesReport r = ascii(dir);
        Dump d = r.last();
        List<Site> rows = r.rowsAtTop(d, "SitesVolume$Cell", "SitesVolume.fill");
        assertEquals(1, rows.size(), r.describe(d, s -> s.cls().startsWith("SitesVolume")));
        Site s = rows.get(0);
        // 400000 cells of 24 or 32 bytes, 100000 kept: about 600 samples allocated, 150 live.
        assertTrue(Math.abs(s.allocObjs() - 400_000) < 120_000, "estimate far off: " + s);
        assertTrue(Math.abs(s.liveObjs() - 100_000) < 40_000, "estimate far off: " + s);
        List<Site> big = r.rowsAtTop(d, "long[]", "SitesVolume.fill");
        assertEquals(1, big.size());
        // 200 arrays of 256 KiB, far above the interval: each is sampled, with weight 1.
        assertEquals(200, big.get(0).allocObjs(), big.toString());
        assertEquals(50, big.get(0).liveObjs(), big.toString());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void threadsAllocatingWhileClassesUnload(int feature) throws Exception {
        Path dir = Jvm.workDir("sites-unload");
        Jvm.Result res = Jvm.run(Jvm.jdkOrSkip(feature), dir, Jvm.envWith("HPROF_SITES_STATS", "1"),
                List.of(Jvm.agentpath("heap=sites,cutoff=0,lineno=n")), "SitesStress",
                Jvm.programs().toString());
        assertEquals(0, res.exit(), res.describe());
        assertTrue(res.out().contains("stress done"), res.describe());
        SitesReport r = ascii(dir);
        Dump d = r.last();
        // Blob's default site moved from start() to churn() while 16 threads allocated.
        List<Site> rows = r.rowsAtTop(d, "SitesStress$Blob", "SitesStress.churn");
        assertEquals(1, rows.size(), r.describe(d, s -> s.cls().startsWith("SitesStress")));
        assertCounts(rows.get(0), 16L * 20_000, 16L * 100);
        List<Site> first = r.rowsAtTop(d, "SitesStress$Blob", "SitesStress.start");
        assertEquals(1, first.size(), r.describe(d, s -> s.cls().startsWith("SitesStress")));
        assertCounts(first.get(0), 16L * 10, 16L * 5);
        List<Site> loaded = new ArrayList<>(r.rows(d, "SitesLoaded", null));
        assertEquals(40L * 50, SitesReport.sum(loaded, Site::allocObjs),
                     r.describe(d, s -> s.cls().equals("SitesLoaded")));
        assertEquals(0, SitesReport.sum(loaded, Site::liveObjs),
                     "objects of unloaded classes are gone");
        assertTrue(res.err().matches("(?s).*default moves [1-9].*"), res.err());
    }

    /** CONTROL alloc traces off and on over the socket (net=): what is allocated while off is
     *  never counted, allocated or live, though its objects stay reachable. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void controlTurnsTrackingOffAndOn(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("sites-control");
        try (NetTest.Peer peer = NetTest.Peer.loopback()) {
            List<String> cmd = new ArrayList<>(List.of(jdk.resolve("bin/java").toString(),
                    Jvm.agentpath("heap=sites,format=b,cutoff=0,lineno=n,net=127.0.0.1:" + peer.port()),
                    "-cp", Jvm.programs().toString(), "SitesControl", dir.toString()));
            Process p = new ProcessBuilder(cmd).directory(dir.toFile())
                    .redirectOutput(dir.resolve("out.txt").toFile())
                    .redirectError(dir.resolve("err.txt").toFile()).start();
            try {
                peer.accept(true);
                Path out = dir.resolve("out.txt");
                NetTest.await(() -> NetTest.read(out).contains("phase 1 done"), "phase 1", 60_000);
                int settings = NetTest.controlSettingsCount(peer);
                peer.send(NetTest.control(1, 0x2)); // alloc traces off
                final int off = settings + 1;
                NetTest.await(() -> NetTest.controlSettingsCount(peer) >= off, "tracking off", 30_000);
                Files.writeString(dir.resolve("go2"), "");
                NetTest.await(() -> NetTest.read(out).contains("phase 2 done"), "phase 2", 60_000);
                peer.send(NetTest.control(2, 0x1)); // alloc traces on
                final int on = settings + 2;
                NetTest.await(() -> NetTest.controlSettingsCount(peer) >= on, "tracking on", 30_000);
                Files.writeString(dir.resolve("go3"), "");
                NetTest.await(() -> NetTest.read(out).contains("phase 3 done"), "phase 3", 60_000);
                peer.send(NetTest.cmd(NetTest.ALLOC_SITES, 3, NetTest.cat(NetTest.u2(0), NetTest.f4(0f))));
                NetTest.await(() -> NetTest.count(NetTest.read(dir.resolve("err.txt")),
                        "dump to 127.0.0.1") >= 1, "the ALLOC SITES command's dump", 30_000);
                Files.writeString(dir.resolve("stop"), "");
                assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "program did not end");
                assertEquals(0, p.exitValue(), NetTest.read(dir.resolve("err.txt")));
                byte[] data = peer.awaitEnd(30_000);
                Path saved = dir.resolve("stream.hprof");
                Files.write(saved, data);
                SitesReport r = SitesReport.binary(saved);
                assertEquals(2, r.dumps.size(), "the command's dump and the exit dump");
                for (Dump d : r.dumps) {
                    List<Site> rows = r.rowsAtTop(d, "SitesControl$Item", "SitesControl.allocate");
                    assertEquals(1, rows.size(), r.describe(d, s -> s.cls().startsWith("SitesControl")));
                    // 3000 + 7000 allocated, 300 + 700 live: phase 2's are not there at all.
                    assertCounts(rows.get(0), 3000 + 7000, 300 + 700);
                }
            } finally {
                p.destroyForcibly().waitFor();
            }
        }
    }

    @Test void heapAllByDefaultWritesSites() throws Exception {
        Path dir = Jvm.workDir("sites-default");
        run(Jvm.defaultJdk(), dir, null, "Hello");
        assertTrue(Files.readString(dir.resolve("java.hprof.txt"))
                       .contains("SITES BEGIN (ordered by live bytes)"));
    }
}
