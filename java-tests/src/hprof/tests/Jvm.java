package hprof.tests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.provider.Arguments;

/** Finds the JDKs the tests run on, starts real JVMs with the agent and captures what they print
 *  and write: the one JDK helper of every test class. */
public final class Jvm {
    private Jvm() {}

    public record Result(int exit, String out, String err, Path dir) {
        public String describe() {
            return "exit " + exit + "\n--- stdout ---\n" + out + "\n--- stderr ---\n" + err;
        }
        public Path file(String name) { return dir.resolve(name); }
    }

    public static Path lib() { return Path.of(env("HPROF_LIB")); }
    public static Path programs() { return Path.of(env("HPROF_PROGRAMS")); }
    public static Path sourceRoot() { return Path.of(env("HPROF_SOURCE_ROOT")); }
    public static Path buildRoot() { return Path.of(env("HPROF_BUILD_ROOT")); }

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty())
            throw new IllegalStateException(name + " is not set: run the tests through meson test");
        return v;
    }

    /** The JDK the build used (JDK 17 on Debian). */
    public static Path defaultJdk() {
        String home = System.getenv("HPROF_JAVA_HOME");
        return home != null && !home.isEmpty() ? Path.of(home) : Path.of(System.getProperty("java.home"));
    }

    /** The feature releases every JDK-parameterised test runs on. */
    static final List<Integer> FEATURES = List.of(17, 21, 25);

    /** One argument (the feature release) per JDK of FEATURES; jdkOrSkip skips a missing one. */
    public static Stream<Arguments> jdks() {
        return FEATURES.stream().map(Arguments::of);
    }

    /** The JDKs with virtual threads (21 and later). */
    public static Stream<Arguments> virtualThreadJdks() {
        return FEATURES.stream().filter(f -> f >= 21).map(Arguments::of);
    }

    /** (feature, value) for every JDK and every value. */
    public static Stream<Arguments> jdksTimes(Object... values) {
        return FEATURES.stream().flatMap(f -> Arrays.stream(values).map(v -> Arguments.of(f, v)));
    }

    /** The JDK of that feature release the build chose (meson passes HPROF_JDK<N> for each one
     *  java-tests/find_jdks.py found, scripts/trixie-jdks.sh's first), or the default JDK if it
     *  is that release; null if none. */
    public static Path jdk(int feature) {
        String v = System.getenv("HPROF_JDK" + feature);
        if (v != null && !v.isEmpty() && Files.isExecutable(Path.of(v, "bin", "java")))
            return Path.of(v);
        return feature(defaultJdk()) == feature ? defaultJdk() : null;
    }

    /** jdk(feature), or the test is skipped (JUnit: aborted) saying why. */
    public static Path jdkOrSkip(int feature) {
        Path jdk = jdk(feature);
        Assumptions.assumeTrue(jdk != null, "no JDK " + feature + " found (scripts/trixie-jdks.sh provides 21 and 25,"
                + " then meson setup --reconfigure): skipped");
        return jdk;
    }

    /** The VM did not crash: no fatal-error banner, no hs_err file. */
    public static void assertNoCrash(Result r) throws IOException {
        Assertions.assertFalse(r.err().contains("A fatal error has been detected"), r.describe());
        try (Stream<Path> files = Files.list(r.dir())) {
            Assertions.assertTrue(files.noneMatch(f -> f.getFileName().toString().startsWith("hs_err")), r.describe());
        }
    }

    /** The feature release from a JDK's release file, or -1. */
    static int feature(Path jdk) {
        try {
            for (String line : Files.readAllLines(jdk.resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    String v = line.substring(line.indexOf('"') + 1);
                    return Integer.parseInt(v.split("[.\"]")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not a JDK
        }
        return -1;
    }

    /** A fresh directory for one test's outputs. */
    public static Path workDir(String name) throws IOException {
        Path base = Path.of(env("HPROF_WORK"));
        Files.createDirectories(base);
        return Files.createTempDirectory(base, name.replaceAll("[^A-Za-z0-9_.-]", "_") + "-");
    }

    /** -agentpath:<lib>=<options> (options may be null). */
    public static String agentpath(String options) {
        return "-agentpath:" + lib() + (options == null ? "" : "=" + options);
    }

    /** Runs jdk/bin/java with jvmArgs, then the main class from the test programs and args. */
    public static Result run(Path jdk, Path dir, List<String> jvmArgs, String main, String... args)
            throws IOException, InterruptedException {
        return run(jdk, dir, Map.of(), jvmArgs, main, args);
    }

    public static Result run(Path jdk, Path dir, Map<String, String> env, List<String> jvmArgs,
                             String main, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(jdk.resolve("bin/java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(programs().toString());
        cmd.add(main);
        cmd.addAll(Arrays.asList(args));
        return exec(cmd, dir, env, 300);
    }

    /** run(), and the JVM exited 0 without a crash report (what most cases check first). */
    public static Result runClean(Path jdk, Path dir, List<String> jvmArgs, String main, String... args)
            throws IOException, InterruptedException {
        Result r = run(jdk, dir, jvmArgs, main, args);
        Assertions.assertEquals(0, r.exit(), r.describe());
        assertNoCrash(r);
        return r;
    }

    public static Result exec(List<String> cmd, Path dir, Map<String, String> env, int timeoutSeconds)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
        pb.environment().putAll(env);
        Path out = Files.createTempFile(dir, "stdout", ".txt");
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd)
                    + "\n" + Files.readString(err));
        }
        String o = Files.readString(out), e = Files.readString(err);
        Files.delete(out);
        Files.delete(err);
        return new Result(p.exitValue(), o, e, dir);
    }

    /** The environment plus one variable. */
    public static Map<String, String> envWith(String key, String value) {
        Map<String, String> m = new HashMap<>();
        m.put(key, value);
        return m;
    }
}
