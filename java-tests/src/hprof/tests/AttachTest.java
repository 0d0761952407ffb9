package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** jcmd <pid> JVMTI.agent_load into a running VM, with real option strings. */
class AttachTest {
    record Target(Process process, Path dir, Path stop) {}

    static Target start(Path jdk, String name) throws Exception {
        Path dir = Jvm.workDir(name);
        Path stop = dir.resolve("stop");
        Process p = new ProcessBuilder(jdk.resolve("bin/java").toString(), "-cp", Jvm.programs().toString(),
                "Sleeper", stop.toString())
                .directory(dir.toFile()).redirectOutput(dir.resolve("out.txt").toFile())
                .redirectError(dir.resolve("err.txt").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.readString(dir.resolve("out.txt")).contains("sleeper ready")) {
            if (System.nanoTime() > deadline || !p.isAlive())
                throw new AssertionError("Sleeper did not start: " + Files.readString(dir.resolve("err.txt")));
            Thread.sleep(50);
        }
        return new Target(p, dir, stop);
    }

    static Jvm.Result jcmd(Path jdk, Target t, String... args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of(jdk.resolve("bin/jcmd").toString(),
                Long.toString(t.process().pid())));
        cmd.addAll(List.of(args));
        return Jvm.exec(cmd, t.dir(), Map.of(), 60);
    }

    static String finish(Target t) throws Exception {
        Files.writeString(t.stop(), "");
        assertTrue(t.process().waitFor(60, TimeUnit.SECONDS), "target did not exit");
        assertEquals(0, t.process().exitValue(), Files.readString(t.dir().resolve("err.txt")));
        return Files.readString(t.dir().resolve("err.txt"));
    }

    /** jcmd JVMTI.agent_load of hprof with the option string in the inner quotes jcmd needs. */
    static Jvm.Result load(Path jdk, Target t, String options) throws IOException, InterruptedException {
        return jcmd(jdk, t, "JVMTI.agent_load", Jvm.lib().toString(), "\"" + options + "\"");
    }

    /** Loads heap=sites in binary format into out; the load must succeed. */
    static void loadSites(Path jdk, Target t, Path out) throws IOException, InterruptedException {
        Jvm.Result r = load(jdk, t, "heap=sites,format=b,file=" + out);
        assertTrue(r.out().contains("return code: 0"), r.describe());
    }

    /** out passes the strict reader and names the threads that were running. */
    static void assertValidProfile(Path out) throws Exception {
        HprofRead.Report report = HprofRead.check(out);
        assertEquals(0, report.exit(), report.output());
        assertTrue(report.count("START THREAD") >= 2, report.output());
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void attachWithQuotedOptionsWritesTheProfile(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Target t = start(jdk, "attach");
        Path out = t.dir().resolve("attached.hprof");
        loadSites(jdk, t, out);
        finish(t);
        assertValidProfile(out);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void unquotedOptionsAreRefusedWithAHintAndTheVmKeepsRunning(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Target t = start(jdk, "attach-bad");
        Jvm.Result r = jcmd(jdk, t, "JVMTI.agent_load", Jvm.lib().toString(), "heap=sites,format=b");
        assertTrue(r.out().contains("return code: -1") || r.out().contains("return code: 1")
                || !r.out().contains("return code: 0"), r.describe());
        String err = finish(t);
        assertTrue(err.contains("HPROF ERROR"), err);
        assertTrue(err.contains("inner quotes"), err);
    }

    /** A load that fails (here: an unknown option) must leave nothing behind that refuses the next. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void aFailedAttachLeavesTheNextAttachWorking(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Target t = start(jdk, "attach-retry");
        Jvm.Result bad = load(jdk, t, "bogus=1");
        assertTrue(!bad.out().contains("return code: 0"), bad.describe());
        Path out = t.dir().resolve("retry.hprof");
        loadSites(jdk, t, out);
        String err = finish(t);
        assertTrue(err.contains("unknown option 'bogus'"), err);
        assertTrue(!err.contains("already loaded"), err);
        assertValidProfile(out);
    }

    /** help prints the help text into the VM's stdout, starts nothing (it crashed the VM once) and
     *  leaves the next attach working although the JVM keeps the library loaded after it. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void helpAtAttachStartsNothingAndTheNextAttachWorks(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Target t = start(jdk, "attach-help");
        Jvm.Result help = load(jdk, t, "help");
        assertTrue(help.out().contains("return code: 0"), help.describe());
        Path out = t.dir().resolve("after-help.hprof");
        loadSites(jdk, t, out);
        String err = finish(t);
        assertTrue(!err.contains("already loaded"), err);
        assertTrue(Files.readString(t.dir().resolve("out.txt")).contains("Heap and CPU Profiling Agent"));
        assertValidProfile(out);
    }

    /** A second real load is refused by design (one profile per VM) and the first one goes on. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void aSecondAttachAfterASuccessfulOneIsRefused(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Target t = start(jdk, "attach-twice");
        Path out = t.dir().resolve("first.hprof");
        loadSites(jdk, t, out);
        Jvm.Result second = load(jdk, t, "heap=dump");
        assertTrue(!second.out().contains("return code: 0"), second.describe());
        String err = finish(t);
        assertTrue(err.contains("already loaded"), err);
        assertValidProfile(out);
    }
}
