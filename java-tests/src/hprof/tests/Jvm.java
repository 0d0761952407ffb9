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

/** Starts real JVMs with the agent and captures what they print and write. */
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

    /** A JDK of the given feature release, from HPROF_JDK<N> or /usr/lib/jvm; null if none. */
    public static Path jdk(int feature) {
        String v = System.getenv("HPROF_JDK" + feature);
        if (v != null && !v.isEmpty() && Files.isExecutable(Path.of(v, "bin", "java")))
            return Path.of(v);
        try (Stream<Path> dirs = Files.list(Path.of("/usr/lib/jvm"))) {
            return dirs.filter(d -> Files.isExecutable(d.resolve("bin/java")))
                       .filter(d -> feature(d) == feature)
                       .sorted().findFirst().orElse(null);
        } catch (IOException e) {
            return null;
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
