package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** `meson install` with -Dinstall_in_jdk=true puts libhprof.so where -agentlib:hprof finds it
 *  with no path at all. Done on a private copy of the JDK, never the system's. */
class InstallTest {
    @Test
    void agentlibFindsTheLibraryInstalledIntoTheJdk() throws Exception {
        // Outside the source tree: meson refuses a jdk_home inside it (build/ is inside).
        Path dir = Files.createTempDirectory("hprof-install-");
        try {
            installAndRun(dir);
        } finally {
            deleteTree(dir);
        }
    }

    static void installAndRun(Path dir) throws Exception {
        Path jdk = dir.resolve("jdk");
        run(List.of("cp", "-a", Jvm.defaultJdk().toRealPath().toString(), jdk.toString()), dir);
        Path build = dir.resolve("build");
        run(List.of("meson", "setup", build.toString(), Jvm.sourceRoot().toString(),
                "--prefix=" + dir.resolve("prefix"), "-Djdk_home=" + jdk, "-Dinstall_in_jdk=true", "-Dtests=false"), dir);
        run(List.of("meson", "install", "-C", build.toString(), "--only-changed", "--quiet"), dir);
        assertTrue(Files.exists(jdk.resolve("lib/libhprof.so")), "installed into the JDK's lib/");

        Jvm.Result r = Jvm.run(jdk, dir, List.of("-agentlib:hprof=heap=sites,format=b"), "Hello");
        assertEquals(0, r.exit(), r.describe());
        assertTrue(Files.size(dir.resolve("java.hprof")) > 19);
        Jvm.Result x = Jvm.run(jdk, dir, List.of("-Xrunhprof:heap=sites,file=xrun.txt"), "Hello");
        assertEquals(0, x.exit(), x.describe());
        assertTrue(Files.readString(dir.resolve("xrun.txt")).startsWith("JAVA PROFILE 1.0.1"));
    }

    /** Best effort: a slow or failed clean-up of the scratch JDK must not hide the test's result. */
    static void deleteTree(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (Exception e) {
            System.err.println("could not remove " + dir + ": " + e);
        }
    }

    static void run(List<String> cmd, Path dir) throws Exception {
        Jvm.Result r = Jvm.exec(cmd, dir, Map.of(), 600);
        assertEquals(0, r.exit(), String.join(" ", cmd) + "\n" + r.describe());
    }
}
