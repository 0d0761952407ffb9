package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * format=phd and format=classic (OpenJ9 heap dumps): the dump of a known graph
 * (java-tests/programs/PhdGraph.java) checked by tools/phd-read (strict; counts per class, the
 * references of the known objects) and by a parser of the classic text here; totals compared
 * with a format=b dump of the same program read by tools/hprof-read.
 */
class PhdTest {
    static final String G = "PhdGraph";
    static final String PAIR = "PhdGraph$Pair", LEAF = "PhdGraph$Leaf", WIDE = "PhdGraph$Wide";

    static Jvm.Result runGraph(Path jdk, Path dir, Map<String, String> env, String options) throws Exception {
        Jvm.Result r = Jvm.run(jdk, dir, env, List.of(Jvm.agentpath(options)), G, "exit");
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertTrue(r.out().contains("graph done"), r.describe());
        assertFalse(r.err().contains("HPROF ERROR"), r.describe());
        assertFalse(r.err().contains("HPROF WARNING"), r.describe());
        return r;
    }

    /** phd-read --json [flags] file; exit code and the parsed summary. */
    record PhdReport(int exit, String output, Map<String, Object> json) {
        long num(String key) {
            Object o = json.get(key);
            assertTrue(o instanceof Number, "no " + key + " in " + output);
            return ((Number) o).longValue();
        }
        long count(String cls) {
            Object c = json.get("class_counts");
            if (c instanceof Map<?, ?> m && m.get(cls) instanceof Map<?, ?> e && e.get("count") instanceof Number n)
                return n.longValue();
            return 0;
        }
        @SuppressWarnings("unchecked")
        List<String> refs() { return (List<String>) json.get("refs"); }
    }

    static PhdReport phdRead(Path file, String... flags) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Jvm.env("PHD_READ"));
        cmd.add("--json");
        cmd.addAll(List.of(flags));
        cmd.add(file.toString());
        Jvm.Result r = Jvm.exec(cmd, file.toAbsolutePath().getParent(), Map.of(), 300);
        String text = r.out().trim();
        Map<String, Object> json = text.startsWith("{") ? HprofRead.asMap(new HprofRead.Json(text).value()) : Map.of();
        return new PhdReport(r.exit(), r.out() + r.err(), json);
    }

    @ParameterizedTest(name = "JDK {0}, {1}")
    @MethodSource("hprof.tests.HeapDumpTest#jdksAndWalks")
    void phdHoldsTheGraph(int feature, String walk) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("phd-" + walk);
        Map<String, String> env = walk.equals("tags") ? Map.of("HPROF_HEAP_WALK", "tags") : Map.of();
        runGraph(jdk, dir, env, "format=phd");
        Path file = dir.resolve("java.phd"); // the default name
        assertTrue(Files.exists(file), "no java.phd in " + dir);
        PhdReport pairs = phdRead(file, "--refs", PAIR);
        assertEquals(0, pairs.exit(), pairs.output());
        assertEquals(6, pairs.num("version"));
        assertEquals(5, pairs.num("flags"));
        assertEquals(0, pairs.num("dangling"));
        assertEquals(0, pairs.num("hashes"));
        assertEquals(0, pairs.num("warnings"), pairs.output());
        assertEquals(0, pairs.num("ibm_hidden_references"));
        assertEquals(1000, pairs.count(PAIR));
        assertEquals(2000, pairs.count(LEAF));
        assertEquals(50, pairs.count(WIDE));
        assertEquals(1, pairs.count("[L" + PAIR + ";"));
        assertEquals(1, pairs.count("[L" + WIDE + ";"));
        assertEquals(2, pairs.count("[L" + LEAF + ";"));
        assertEquals(1000, pairs.refs().size());
        for (String line : pairs.refs())
            assertEquals(LEAF + " " + LEAF, line, "references of a Pair");
        PhdReport wides = phdRead(file, "--refs", WIDE);
        assertEquals(50, wides.refs().size());
        for (String line : wides.refs())
            assertEquals(String.join(" ", java.util.Collections.nCopies(10, LEAF)), line);
        PhdReport arrays = phdRead(file, "--refs", "[L" + LEAF + ";");
        assertEquals(List.of("", String.join(" ", java.util.Collections.nCopies(100, LEAF))), arrays.refs());
        PhdReport intArrays = phdRead(file, "--refs", "[[I");
        assertTrue(intArrays.refs().contains("[I [I [I [I [I"), intArrays.output());
    }

    /** The classic text: records by address, their types, sizes and references. */
    record ClassicRecord(String kind, String type, long size, List<String> refs) {}

    static Map<String, ClassicRecord> parseClassic(String text, long[] trailer) {
        Map<String, ClassicRecord> recs = new HashMap<>();
        ClassicRecord last = null;
        boolean refLineSeen = false;
        List<String> lines = text.lines().toList();
        assertTrue(lines.get(0).startsWith("// Version: "), lines.get(0));
        for (String line : lines.subList(1, lines.size())) {
            if (line.startsWith("// Breakdown - ")) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "// Breakdown - Classes: (\\d+), Objects: (\\d+), ObjectArrays: (\\d+), PrimitiveArrays: (\\d+)")
                        .matcher(line);
                assertTrue(m.matches(), line);
                for (int i = 0; i < 4; i++)
                    trailer[i] = Long.parseLong(m.group(i + 1));
            } else if (line.startsWith("// EOF:  Total 'Objects',Refs(null) : ")) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile(".* : (\\d+),(\\d+)\\((\\d+)\\)").matcher(line);
                assertTrue(m.matches(), line);
                trailer[4] = Long.parseLong(m.group(1));
            } else if (line.startsWith("\t")) {
                // The VM's rendering: a TAB-led line after every record, each reference
                // followed by one space, the TAB alone when there are none.
                assertNotNull(last, "references before any record: " + line);
                assertFalse(refLineSeen, "two reference lines for one record: " + line);
                assertTrue(line.matches("\t(0x[0-9A-F]{16} )*"), "bad reference line: " + line);
                if (line.length() > 1)
                    last.refs().addAll(List.of(line.trim().split(" ")));
                refLineSeen = true;
            } else {
                assertTrue(last == null || refLineSeen, "a record without its reference line");
                java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "(0x[0-9A-F]{16}) \\[(\\d+)\\] (OBJ|CLS) (\\S+)").matcher(line);
                assertTrue(m.matches(), "bad line: " + line);
                refLineSeen = false;
                last = new ClassicRecord(m.group(3), m.group(4), Long.parseLong(m.group(2)), new ArrayList<>());
                assertEquals(null, recs.put(m.group(1), last), "address used twice: " + line);
            }
        }
        return recs;
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void classicHoldsTheGraphAndMatchesPhdAndBinaryTotals(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("classic");
        runGraph(jdk, dir, Map.of(), "format=classic");
        Path file = dir.resolve("java.classic.txt");
        long[] trailer = new long[5];
        Map<String, ClassicRecord> recs = parseClassic(Files.readString(file), trailer);
        // phd-read's classic checker (the VM's rendering, strictly) agrees
        PhdReport checked = phdRead(file);
        assertEquals(0, checked.exit(), checked.output());
        assertEquals(recs.size(), checked.num("records"), checked.output());
        assertEquals(0, checked.num("dangling"), checked.output());
        Map<String, Long> counts = new HashMap<>();
        long classes = 0, objects = 0, objArrays = 0, primArrays = 0;
        for (ClassicRecord r : recs.values()) {
            if (r.kind().equals("OBJ"))
                counts.merge(r.type(), 1L, Long::sum);
            if (r.kind().equals("CLS"))
                classes++;
            else if (r.type().startsWith("[L") || r.type().startsWith("[["))
                objArrays++;
            else if (r.type().startsWith("["))
                primArrays++;
            else
                objects++;
            for (String ref : r.refs())
                assertTrue(recs.containsKey(ref), "dangling reference " + ref + " of " + r);
        }
        assertEquals(List.of(classes, objects, objArrays, primArrays, (long) recs.size()),
                List.of(trailer[0], trailer[1], trailer[2], trailer[3], trailer[4]), "trailer counts");
        assertEquals(1000L, counts.get(PAIR));
        assertEquals(2000L, counts.get(LEAF));
        assertEquals(50L, counts.get(WIDE));
        for (ClassicRecord r : recs.values()) {
            if (r.kind().equals("OBJ") && r.type().equals(PAIR)) {
                assertEquals(2, r.refs().size(), "references of a Pair");
                for (String ref : r.refs())
                    assertEquals(LEAF, recs.get(ref).type());
            } else if (r.kind().equals("OBJ") && r.type().equals(WIDE)) {
                assertEquals(10, r.refs().size());
            }
        }

        // PHD and binary runs of the same program: the same totals, give or take what differs
        // between two runs of a VM (a few JDK-internal objects)
        runGraph(jdk, dir, Map.of(), "format=phd");
        PhdReport phd = phdRead(dir.resolve("java.phd"));
        assertEquals(0, phd.exit(), phd.output());
        runGraph(jdk, dir, Map.of(), "heap=dump,format=b");
        HprofRead.Report bin = HprofRead.check(dir.resolve("java.hprof"));
        assertEquals(0, bin.exit(), bin.output());
        @SuppressWarnings("unchecked")
        Map<String, Object> d = (Map<String, Object>) ((List<Object>) bin.get("heap_dumps")).get(0);
        long bClasses = ((Number) d.get("classes")).longValue(), bInstances = ((Number) d.get("instances")).longValue(),
                bObjArrays = ((Number) d.get("object_arrays")).longValue(),
                bPrimArrays = ((Number) d.get("primitive_arrays")).longValue();
        String what = "classic " + List.of(classes, objects, objArrays, primArrays) + ", phd "
                + List.of(phd.num("classes"), phd.num("objects"), phd.num("object_arrays"), phd.num("primitive_arrays"))
                + ", binary " + List.of(bClasses, bInstances, bObjArrays, bPrimArrays);
        near(bClasses, phd.num("classes"), what);
        near(bClasses, classes, what);
        near(bInstances, phd.num("objects"), what);
        near(bInstances, objects, what);
        near(bObjArrays, phd.num("object_arrays"), what);
        near(bObjArrays, objArrays, what);
        near(bPrimArrays, phd.num("primitive_arrays"), what);
        near(bPrimArrays, primArrays, what);
        assertEquals(1000, phd.count(PAIR));
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void phdOverTheSocket(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("phd-net");
        try (NetTest.Peer peer = NetTest.Peer.loopback()) {
            java.util.concurrent.CompletableFuture<Jvm.Result> run = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return runGraph(jdk, dir, Map.of(), "format=phd,net=127.0.0.1:" + peer.port());
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            peer.accept(true);
            run.get(300, java.util.concurrent.TimeUnit.SECONDS);
            Path file = dir.resolve("net.phd");
            Files.write(file, peer.awaitEnd(60_000));
            assertFalse(Files.exists(dir.resolve("java.phd")));
            PhdReport r = phdRead(file, "--refs", PAIR);
            assertEquals(0, r.exit(), r.output());
            assertEquals(1000, r.count(PAIR));
            assertEquals(1000, r.refs().size());
        }
    }

    /** SIGQUIT dumps while the program runs; the dump at exit finds the file complete and is
     *  dropped with one warning (a PHD file holds one dump). */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void onlyTheFirstDumpIsWritten(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("phd-two-dumps");
        Path go = dir.resolve("go");
        HeapDumpTest.GraphProcess p = HeapDumpTest.GraphProcess.start(jdk, dir,
                List.of(Jvm.agentpath("format=phd")), "wait", go.toString());
        p.signalDump(1);
        Files.writeString(go, "");
        assertTrue(p.process().waitFor(120, java.util.concurrent.TimeUnit.SECONDS), "did not exit");
        assertEquals(0, p.process().exitValue());
        String err = Files.readString(p.err());
        assertEquals(1, err.lines().filter(l -> l.startsWith("HPROF WARNING: a PHD file holds one heap dump")).count(), err);
        assertFalse(err.contains("HPROF ERROR"), err);
        PhdReport r = phdRead(dir.resolve("java.phd"));
        assertEquals(0, r.exit(), r.output());
        assertEquals(HeapDumpTest.HeapGraphCounts.NODES, r.count("HeapDumpGraph$Node"), r.output());
    }

    /** Two runs of one program: within 1% + 20. */
    static void near(long expected, long actual, String what) {
        assertTrue(Math.abs(expected - actual) <= expected / 100 + 20, expected + " vs " + actual + ": " + what);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"format=phd,heap=sites", "format=phd,heap=all", "format=classic,cpu=samples",
            "format=phd,cpu=times", "format=classic,monitor=y", "format=phd,gz=y"})
    void otherProfilesAreRefused(String option) throws Exception {
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), Jvm.workDir("phd-bad"), List.of(Jvm.agentpath(option)), "Hello");
        assertNotEquals(0, r.exit(), r.describe());
        assertFalse(r.out().contains("hello done"), r.describe());
        List<String> ours = r.err().lines().filter(l -> l.startsWith("HPROF ERROR")).toList();
        assertEquals(1, ours.size(), r.describe());
        String second = option.substring(option.indexOf(',') + 1);
        assertTrue(ours.get(0).contains(second), ours.get(0));
    }
}
