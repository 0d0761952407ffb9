package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Loading the agent, help, and bad options on a real VM, on every JDK present. */
class StartupTest {
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void helpPrintsTheOptionTableAndExitsZero(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Jvm.Result r = Jvm.run(jdk, Jvm.workDir("help"), List.of(Jvm.agentpath("help")), "Hello");
        assertEquals(0, r.exit(), r.describe());
        assertTrue(r.out().contains("hprof usage: java -agentlib:hprof=[help]|[<option>=<value>, ...]"), r.describe());
        for (String option : List.of("heap=dump|sites|all", "cpu=samples|times|old", "monitor=y|n",
                "format=a|b", "file=<file>", "net=<host>:<port>", "depth=<size>", "interval=<ms>",
                "cutoff=<value>", "lineno=y|n", "thread=y|n", "doe=y|n", "msa=y|n", "force=y|n",
                "verbose=y|n", "gc_okay"))
            assertTrue(r.out().contains(option), "help lacks " + option + "\n" + r.out());
        assertFalse(r.out().contains("hello done"), "the program must not run after help");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"heap=foo", "cpu=fast", "monitor=maybe", "format=x", "file=",
            "net=nohostport", "net=localhost:0", "net=localhost:99999", "net=:8000", "depth=-1",
            "depth=abc", "interval=-5", "interval=ten", "cutoff=2", "cutoff=-0.1", "cutoff=x",
            "lineno=1", "thread=yes", "doe=", "msa=q", "force=z", "verbose=", "bogus=1",
            "heap", "format=b,monitor=y", "format=b,cpu=times", "format=b,cpu=old"})
    void badOptionStopsTheVmWithOneClearLine(String option) throws Exception {
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), Jvm.workDir("bad"), List.of(Jvm.agentpath(option)), "Hello");
        assertNotEquals(0, r.exit(), r.describe());
        assertFalse(r.out().contains("hello done"), r.describe());
        Jvm.assertNoCrash(r);
        List<String> ours = r.err().lines().filter(l -> l.startsWith("HPROF ERROR")).toList();
        assertEquals(1, ours.size(), "exactly one HPROF ERROR line\n" + r.describe());
        String name = option.contains(",") ? option.substring(option.lastIndexOf(',') + 1) : option;
        name = name.contains("=") ? name.substring(0, name.indexOf('=')) : name;
        assertTrue(ours.get(0).contains(name), "the message names " + name + ": " + ours.get(0));
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void defaultOptionsWriteAsciiFileWithThreads(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("default");
        Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath(null)), "Hello");
        assertEquals(0, r.exit(), r.describe());
        Jvm.assertNoCrash(r);
        assertTrue(r.out().contains("hello done"));
        String txt = Files.readString(dir.resolve("java.hprof.txt"));
        assertTrue(txt.startsWith("JAVA PROFILE 1.0.1, created "), txt);
        assertTrue(txt.contains("THREAD START (obj="), txt);
        assertTrue(txt.matches("(?s).*THREAD START \\(obj=[0-9a-f]+, id = \\d+, name=\"hello-worker\", group=\"main\"\\).*"), txt);
        assertTrue(txt.contains("THREAD END (id = "), txt);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void hadoopOptionStringWorksUnchanged(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("hadoop");
        Path out = dir.resolve("attempt_01.profile");
        String opts = "cpu=samples,heap=sites,force=n,thread=y,verbose=n,file=" + out;
        Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath(opts)), "Hello");
        assertEquals(0, r.exit(), r.describe());
        assertTrue(Files.size(out) > 0);
        assertFalse(r.err().contains("HPROF:"), "verbose=n prints nothing\n" + r.describe());
        // force=n: a second run must not overwrite the first file.
        long before = Files.size(out);
        Jvm.Result again = Jvm.run(jdk, dir, List.of(Jvm.agentpath(opts)), "Hello");
        assertEquals(0, again.exit(), again.describe());
        assertEquals(before, Files.size(out));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(2, files.filter(f -> f.getFileName().toString().startsWith("attempt_01.profile")).count());
        }
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void binaryFormatPassesTheStrictReader(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("binary");
        Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath("heap=sites,format=b")), "Hello");
        assertEquals(0, r.exit(), r.describe());
        Path file = dir.resolve("java.hprof");
        byte[] head = Files.readAllBytes(file);
        assertEquals("JAVA PROFILE 1.0.2\0", new String(head, 0, 19, "ISO-8859-1"));
        HprofRead.Report report = HprofRead.check(file);
        assertEquals(0, report.exit(), report.output());
        assertTrue(report.count("START THREAD") >= 2, report.output());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void xrunhprofLoadsThroughLdLibraryPath(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("xrun");
        Jvm.Result r = Jvm.run(jdk, dir, Jvm.envWith("LD_LIBRARY_PATH", Jvm.lib().getParent().toString()),
                List.of("-Xrunhprof:heap=sites"), "Hello");
        assertEquals(0, r.exit(), r.describe());
        assertTrue(Files.readString(dir.resolve("java.hprof.txt")).startsWith("JAVA PROFILE 1.0.1"));
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void agentlibLoadsThroughLdLibraryPath(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("agentlib");
        Jvm.Result r = Jvm.run(jdk, dir, Jvm.envWith("LD_LIBRARY_PATH", Jvm.lib().getParent().toString()),
                List.of("-agentlib:hprof=heap=sites,format=b"), "Hello");
        assertEquals(0, r.exit(), r.describe());
        assertTrue(Files.size(dir.resolve("java.hprof")) > 19);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void anOutputFileThatCannotBeOpenedStopsTheVmWithAnHprofError(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("bad-file");
        Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath("heap=sites,file=" + dir.resolve("no-dir/x.txt"))),
                "Hello");
        assertTrue(r.exit() != 0, r.describe());
        assertTrue(r.err().contains("HPROF ERROR: cannot open " + dir.resolve("no-dir/x.txt")), r.describe());
    }
}
