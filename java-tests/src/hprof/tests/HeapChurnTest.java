package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;
import org.graalvm.visualvm.lib.jfluid.heap.ObjectFieldValue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Heap dumps under class churn (java-tests/programs/ClassChurn.java): threads define classes
 * through fresh class loaders and drop them (they unload) while SIGQUIT dumps and socket DUMP
 * HEAP commands run back to back. Every dump must be whole: hprof-read (strict: no dangling
 * reference, INSTANCE DUMPs exactly as long as their CLASS DUMP chains say) and the VisualVM
 * reader on the first VISUALVM_DUMPS of them (every instance field and static field id
 * resolves; VisualVM reads an array element or a loader id it cannot resolve as null, so those
 * are hprof-read's to check).
 */
class HeapChurnTest {
    static final int ROUNDS = 5; // socket dumps, and as many SIGQUIT dumps, alternating
    // hprof-read checks every dump strictly; VisualVM, the independent reader, reads the first
    // ones (two of each kind, all taken mid-churn): the later dumps grow to ~800,000 objects and
    // VisualVM's indexing took 1-5 minutes each, two thirds of the JUnit suite's time.
    static final int VISUALVM_DUMPS = 4;

    @ParameterizedTest(name = "JDK {0}, {1}")
    @MethodSource("hprof.tests.HeapDumpTest#jdksAndWalks")
    void dumpsStayWholeWhileClassesComeAndGo(int feature, String walk) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("heapchurn-" + walk);
        Path saved = dir.resolve("churn.hprof"), go = dir.resolve("go"), portFile = dir.resolve("port");
        Path out = dir.resolve("out.txt"), err = dir.resolve("err.txt");
        Process listen = new ProcessBuilder(Jvm.buildRoot().resolve("tools/hprof-listen").toString(), "--host",
                "127.0.0.1", "--port", "0", "--port-file", portFile.toString(), "--accept-timeout", "60", "--out",
                saved.toString(), "--stdin").directory(dir.toFile())
                .redirectOutput(dir.resolve("listen.out").toFile()).redirectError(dir.resolve("listen.err").toFile())
                .start();
        Process java = null;
        try {
            awaitPort(listen, portFile);
            int port = Integer.parseInt(Files.readString(portFile).trim());
            List<String> cmd = new ArrayList<>(List.of(jdk.resolve("bin/java").toString(),
                    Jvm.agentpath("heap=dump,format=b,net=127.0.0.1:" + port), "-cp", Jvm.programs().toString(),
                    "ClassChurn", "4", "wait", go.toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            pb.environment().putAll(HeapDumpTest.walkEnv(walk));
            java = pb.start();
            await(java, out, err, "churn ready", 1);
            int dumps = 0;
            for (int i = 0; i < ROUNDS; i++) {
                listen.getOutputStream().write("dump\n".getBytes(StandardCharsets.US_ASCII));
                listen.getOutputStream().flush();
                await(java, out, err, "dump to ", ++dumps);
                Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(java.pid())).start();
                assertEquals(0, kill.waitFor());
                await(java, out, err, "dump to ", ++dumps);
            }
            listen.getOutputStream().close();
            Files.writeString(go, "");
            assertTrue(java.waitFor(180, TimeUnit.SECONDS), "did not exit");
            String e = Files.readString(err);
            assertEquals(0, java.exitValue(), e);
            assertTrue(listen.waitFor(60, TimeUnit.SECONDS), "hprof-listen did not end");
            assertEquals(0, listen.exitValue(), Files.readString(dir.resolve("listen.err")));
            dumps++; // the exit dump

            // Only the two documented warnings: objects of classes loaded during a dump left out,
            // and the references to them written as null; each with its count.
            String unexpected = e.lines().filter(l -> l.startsWith("HPROF ERROR") || (l.startsWith("HPROF WARNING")
                    && !l.contains("classes loaded or linked during the dump")
                    && !l.contains("references to objects left out were written as null")))
                    .collect(Collectors.joining("\n"));
            assertTrue(unexpected.isEmpty(), e);
            assertTrue(!e.contains("A fatal error"), e);

            HprofRead.Report report = HprofRead.check(saved);
            assertEquals(0, report.exit(), report.output());
            assertTrue(report.get("heap_dumps") instanceof List<?> l && l.size() == dumps,
                    dumps + " dumps expected: " + report.output());

            int maxPayloads = 0;
            for (int d = 0; d < VISUALVM_DUMPS; d++) {
                Heap heap = HeapFactory.createHeap(saved.toFile(), d);
                maxPayloads = Math.max(maxPayloads, checkWhole(heap, "dump " + d));
            }
            // The dumps did meet many loaders' copies of the churned classes.
            assertTrue(maxPayloads > 10, "only " + maxPayloads + " ClassChurn$Payload classes in a dump");
            assertTrue(loaders(Files.readString(out)) > maxPayloads, Files.readString(out));
        } finally {
            if (java != null)
                java.destroyForcibly().waitFor();
            listen.destroyForcibly().waitFor();
        }
    }

    /** A class loader's classes loaded, dumped (SIGQUIT), dropped and unloaded, then the exit
     * dump: UNLOAD CLASS records for them (hprof-read checks that nothing after them names
     * them), and the second dump no longer holds them. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void unloadedClassesGetUnloadClassRecords(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("heapchurn-unload");
        Path file = dir.resolve("unload.hprof"), go = dir.resolve("go");
        Path out = dir.resolve("out.txt"), err = dir.resolve("err.txt");
        Process java = new ProcessBuilder(jdk.resolve("bin/java").toString(),
                Jvm.agentpath("heap=dump,format=b,file=" + file), "-cp", Jvm.programs().toString(), "ClassChurn",
                "unload", go.toString()).directory(dir.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
        try {
            await(java, out, err, "loaded", 1);
            Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(java.pid())).start();
            assertEquals(0, kill.waitFor());
            await(java, out, err, "dump to ", 1);
            Files.writeString(go, "");
            assertTrue(java.waitFor(120, TimeUnit.SECONDS), "did not exit");
            assertEquals(0, java.exitValue(), Files.readString(err));
        } finally {
            java.destroyForcibly().waitFor();
        }
        assertTrue(Files.readString(out).contains("unloaded"), Files.readString(out));
        HprofRead.Report report = HprofRead.check(file);
        assertEquals(0, report.exit(), report.output());
        // ClassChurn$Payload, $PayloadBase, $Inner and the array classes of the loader.
        assertTrue(report.count("UNLOAD CLASS") >= 3, report.output());
        Heap first = HeapFactory.createHeap(file.toFile(), 0), last = HeapFactory.createHeap(file.toFile(), 1);
        assertEquals(1, count(first, "ClassChurn$Payload"), "the payload in the first dump");
        assertEquals(0, count(last, "ClassChurn$Payload"), "no payload in the exit dump");
    }

    static int count(Heap heap, String name) {
        int n = 0;
        for (JavaClass c : heap.getAllClasses())
            n += c.getName().equals(name) ? 1 : 0;
        return n;
    }

    /** Every id a dump's instances, arrays and classes hold names an object of the dump.
     * Returns how many ClassChurn$Payload classes it holds. */
    static int checkWhole(Heap heap, String what) {
        long refs = 0;
        for (var it = heap.getAllInstancesIterator(); it.hasNext();) {
            Instance i = it.next();
            assertNotNull(i.getJavaClass(), what + ": instance without class: " + i.getInstanceId());
            for (var fv : i.getFieldValues())
                if (fv instanceof ObjectFieldValue o)
                    refs += resolves(heap, Long.parseLong(o.getValue()), what, i);
        }
        int payloads = 0;
        for (JavaClass c : heap.getAllClasses()) {
            if (c.getName().equals("ClassChurn$Payload"))
                payloads++;
            Instance loader = c.getClassLoader();
            if (loader != null)
                refs++;
            // (A loader, signers or domain id that names no object is hprof-read's to find:
            // VisualVM reads it as null.)
            for (var fv : c.getStaticFieldValues())
                if (fv instanceof ObjectFieldValue o)
                    refs += resolves(heap, Long.parseLong(o.getValue()), what, c.getClassLoader());
        }
        assertTrue(refs > 10000, what + ": only " + refs + " references");
        return payloads;
    }

    static int resolves(Heap heap, long id, String what, Object from) {
        if (id == 0)
            return 0;
        assertNotNull(heap.getInstanceByID(id), what + ": dangling " + Long.toHexString(id) + " from " + from);
        return 1;
    }

    static long loaders(String out) {
        Matcher m = Pattern.compile("churn done: \\d+ rounds, (\\d+) loaders").matcher(out);
        assertTrue(m.find(), out);
        return Long.parseLong(m.group(1));
    }

    static void awaitPort(Process listen, Path portFile) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(portFile) || Files.readString(portFile).isBlank()) {
            assertTrue(System.nanoTime() < deadline && listen.isAlive(), "hprof-listen did not listen");
            Thread.sleep(50);
        }
    }

    static void await(Process p, Path out, Path err, String text, int times) throws Exception {
        Path file = text.startsWith("dump to") ? err : out;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (HeapDumpTest.GraphProcess.count(Files.readString(file), text) < times) {
            if (System.nanoTime() > deadline || !p.isAlive())
                throw new AssertionError("no '" + text + "' x" + times + "\n" + Files.readString(out)
                        + Files.readString(err));
            Thread.sleep(20);
        }
    }
}
