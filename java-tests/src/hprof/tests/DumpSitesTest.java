package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import hprof.tests.SitesReport.Dump;
import hprof.tests.SitesReport.Site;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Heap dumps that carry each object's allocation site (issue 30): SitesDump makes known numbers
 * of live objects at known sites; with heap=all every one of them carries its site's trace in
 * the dump, and per site (class, trace) the dump holds exactly as many objects as heap=sites'
 * SITES record of the same exit dump counts live. Read back with hprof-read --traces (strict:
 * every trace serial a record names is a STACK TRACE written before) and the VisualVM reader.
 */
class DumpSitesTest {
    static final String P = "SitesDump";
    static final String LEAF = P + "$Leaf", NODE = P + "$Node", MADE = P + "$Made";
    // SitesDump's constants.
    static final int LEAVES = 3000, NODES = 2000, INTS = 1500, ARRAYS = 700, REFLECTED = 400,
            STRINGS = 900;
    static final int EMPTY_TRACE = 1;
    static final Pattern SUMMARY =
        Pattern.compile("heap dump: (\\d+) objects \\(.*\\), (\\d+) with an allocation site, "
                        + "(\\d+) without");

    static Jvm.Result run(Path jdk, Path dir, String options, String... vmOptions)
        throws Exception {
        List<String> args = new ArrayList<>(List.of(vmOptions));
        args.add(Jvm.agentpath(options));
        Jvm.Result r = Jvm.runClean(jdk, dir, args, P);
        assertFalse(r.err().contains("HPROF ERROR"), r.describe());
        assertFalse(r.err().contains("HPROF WARNING"), r.describe());
        return r;
    }

    /** Objects of the dump by "trace class", from hprof-read --traces. */
    @SuppressWarnings("unchecked")
    static Map<String, Long> dumpCounts(HprofRead.Report rep) {
        List<Object> dumps = (List<Object>) rep.get("heap_dumps");
        assertEquals(1, dumps.size(), rep.output());
        Map<String, Object> d = (Map<String, Object>) dumps.get(0);
        Map<String, Long> counts = new HashMap<>();
        for (Object o : (List<Object>) d.get("allocation_traces")) {
            Map<String, Object> row = (Map<String, Object>) o;
            counts.put(((Number) row.get("trace")).intValue() + " " + row.get("class"),
                       ((Number) row.get("count")).longValue());
        }
        return counts;
    }

    /** Live objects heap=sites counted at the program's sites of cls (a frame of method). */
    static long live(SitesReport r, Dump d, String cls, String method) {
        return SitesReport.sum(r.rows(d, cls, P + "." + method), Site::liveObjs);
    }

    /** Objects of the dump at the program's sites of cls (a frame of method in their trace). */
    static long dumped(SitesReport r, Map<String, Long> counts, String cls, String method) {
        long n = 0;
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            int sp = e.getKey().indexOf(' ');
            int trace = Integer.parseInt(e.getKey().substring(0, sp));
            SitesReport.Trace t = r.traces.get(trace);
            if (e.getKey().substring(sp + 1).equals(cls) && t != null &&
                t.methods().contains(P + "." + method))
                n += e.getValue();
        }
        return n;
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void everyObjectOfAKnownSiteCarriesItsTrace(int feature) throws Exception {
        checkSites(Jvm.jdkOrSkip(feature), "dump-sites", true);
    }

    /** The same with the other collectors (G1 above): objects are found by address, and each
     * collector lays out and walks its heap in its own way. Without VisualVM, to stay cheap. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"-XX:+UseParallelGC", "-XX:+UseSerialGC"})
    void otherCollectorsToo(String collector) throws Exception {
        checkSites(Jvm.defaultJdk(), "dump-sites-" + collector.substring(8), false, collector);
    }

    static void checkSites(Path jdk, String work, boolean visualvm, String... vmOptions)
        throws Exception {
        Path dir = Jvm.workDir(work);
        Jvm.Result r = run(jdk, dir, "heap=all,format=b,depth=12,cutoff=0", vmOptions);
        Path file = dir.resolve("java.hprof");
        HprofRead.Report rep = HprofRead.check(file, "--traces");
        assertEquals(0, rep.exit(), rep.output());
        SitesReport sites = SitesReport.binary(file);
        Dump d = sites.last();
        Map<String, Long> counts = dumpCounts(rep);

        // The program's sites and how many objects each keeps.
        String[][] known = {{LEAF, "makeLeaves"}, {NODE, "makeNodes"}, {"int[]", "makeInts"},
                            {LEAF + "[]", "makeArrays"}, {MADE, "makeReflected"},
                            {"java.lang.String", "makeStrings"}, {"byte[]", "makeStrings"}};
        long[] want = {LEAVES, NODES, INTS, ARRAYS, REFLECTED, STRINGS, STRINGS};
        for (int i = 0; i < known.length; i++) {
            String what = known[i][0] + " at " + known[i][1];
            assertEquals(want[i], live(sites, d, known[i][0], known[i][1]), "heap=sites: " + what);
            assertEquals(want[i], dumped(sites, counts, known[i][0], known[i][1]), "dump: " + what);
        }

        // Per site of heap=sites: as many objects in the dump as it counts live for the
        // program's kept objects; no more than that for any other site (the dump has only
        // reachable objects, SITES counts whatever is not collected yet).
        int programSites = 0;
        for (Site s : d.sites()) {
            Long n = counts.get(s.trace() + " " + s.cls());
            long inDump = n == null ? 0 : n;
            boolean kept = false;
            for (String[] k : known)
                kept |= s.cls().equals(k[0]) && sites.trace(s).methods().contains(P + "." + k[1]);
            if (kept) {
                programSites++;
                assertEquals(s.liveObjs(), inDump, "objects of " + s + " in the dump");
            } else if (s.trace() != EMPTY_TRACE) { // the dump's empty trace: every unknown
                assertTrue(inDump <= s.liveObjs(), "objects of " + s + " in the dump: " + inDump);
            }
        }
        assertTrue(programSites >= known.length, "sites of the program: " + programSites);

        // The summary line: objects with a site are those whose trace is not the empty one.
        Matcher m = SUMMARY.matcher(r.err());
        assertTrue(m.find(), r.err());
        long with = 0, all = 0;
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            all += e.getValue();
            if (!e.getKey().startsWith(EMPTY_TRACE + " "))
                with += e.getValue();
        }
        assertEquals(all, Long.parseLong(m.group(1)), r.err());
        assertEquals(with, Long.parseLong(m.group(2)), r.err());
        assertEquals(all - with, Long.parseLong(m.group(3)), r.err());

        // VisualVM's reader still reads it.
        if (!visualvm)
            return;
        Heap heap = HeapFactory.createHeap(file.toFile(), 0);
        assertEquals(LEAVES, heap.getJavaClassByName(LEAF).getInstancesCount());
        assertEquals(REFLECTED, heap.getJavaClassByName(MADE).getInstancesCount());
    }

    /** Ascii: OBJ and ARR lines name their site's TRACE; the header counts them. */
    @Test
    void asciiObjectLinesNameTheirTrace() throws Exception {
        Path dir = Jvm.workDir("dump-sites-ascii");
        run(Jvm.defaultJdk(), dir, "heap=all,depth=12,cutoff=0");
        Path file = dir.resolve("java.hprof.txt");
        SitesReport sites = SitesReport.ascii(file);
        List<Site> leaves = sites.rows(sites.last(), LEAF, P + ".makeLeaves");
        assertEquals(1, leaves.size(), leaves.toString());
        String text = Files.readString(file);
        Pattern obj = Pattern.compile("^OBJ \\p{XDigit}+ \\(sz=\\d+, trace=(\\d+), class=" +
                                      Pattern.quote(LEAF) + "@", Pattern.MULTILINE);
        Matcher m = obj.matcher(text);
        int n = 0;
        while (m.find()) {
            assertEquals(leaves.get(0).trace(), Integer.parseInt(m.group(1)), m.group());
            n++;
        }
        assertEquals(LEAVES, n);
        assertTrue(text.contains("TRACE " + leaves.get(0).trace() + ":"), "TRACE written");
        Matcher h = Pattern.compile("HEAP DUMP BEGIN \\((\\d+) objects, \\d+ bytes\\) \\((\\d+) with "
                                    + "an allocation site, (\\d+) without\\) ").matcher(text);
        assertTrue(h.find(), "header");
        long objLines = text.lines().filter(l -> l.startsWith("OBJ ") || l.startsWith("ARR ")).count();
        assertEquals(objLines, Long.parseLong(h.group(2)) + Long.parseLong(h.group(3)));
        assertTrue(Long.parseLong(h.group(2)) >= LEAVES + NODES + INTS + ARRAYS);
    }
}
