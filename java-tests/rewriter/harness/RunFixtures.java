// Runs each fixture class twice, as compiled and as rewritten, each in its own class loader under
// -Xverify:all, and checks that
//   - every rewritten class (nested ones too) loads, links and passes the verifier;
//   - run() returns the same transcript both times (behaviour, caught exceptions, line numbers);
//   - the checking tracker saw entries, every entry got its exit, no exit was unexpected, and
//     the only frames closed without their own exit are constructors (whose superclass
//     constructor threw: see rewriter/classfile_rewriter.h).
//
// usage: java -Xverify:all -cp <harness> RunFixtures <original-dir> <rewritten-dir> <tracker-dir> <map>
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

public class RunFixtures {
    static int failures;

    static void fail(String what) {
        failures++;
        System.out.println("FAIL " + what);
    }

    static String call(Class<?> c) {
        try {
            Method m = c.getMethod("run");
            return String.valueOf(m.invoke(null));
        } catch (java.lang.reflect.InvocationTargetException e) {
            return "exception " + e.getCause();
        } catch (ReflectiveOperationException e) {
            return "cannot call run(): " + e;
        }
    }

    public static void main(String[] args) throws Exception {
        Path orig = Paths.get(args[0]), rw = Paths.get(args[1]);
        URLClassLoader trackerLoader = new URLClassLoader(new URL[] {Paths.get(args[2]).toUri().toURL()},
                ClassLoader.getPlatformClassLoader());
        Class<?> tracker = Class.forName("hprof.Tracker", true, trackerLoader);
        @SuppressWarnings("unchecked")
        java.util.Map<Long, String> names = (java.util.Map<Long, String>) tracker.getField("names").get(null);
        for (String line : Files.readAllLines(Paths.get(args[3]))) {
            String[] p = line.split(" ");
            names.put((Long.parseLong(p[0]) << 32) | Long.parseLong(p[1]), p[2] + "." + p[3] + p[4]);
        }
        URLClassLoader origLoader = new URLClassLoader(new URL[] {orig.toUri().toURL()}, trackerLoader);
        URLClassLoader rwLoader = new URLClassLoader(new URL[] {rw.toUri().toURL()}, trackerLoader);

        List<String> classes;
        try (Stream<Path> s = Files.walk(rw)) {
            classes = s.filter(f -> f.toString().endsWith(".class"))
                    .map(f -> rw.relativize(f).toString().replace('/', '.').replaceAll("\\.class$", ""))
                    .sorted().collect(Collectors.toList());
        }
        // Link (and so verify) every rewritten class, including those run() never touches.
        int linked = 0;
        for (String n : classes) {
            try {
                Class.forName(n, false, rwLoader).getDeclaredMethods();
                linked++;
            } catch (Throwable e) {
                fail("linking rewritten " + n + ": " + e);
            }
        }
        System.out.println("linked " + linked + " rewritten classes");

        List<String> fixtures = new ArrayList<>();
        for (String n : classes)
            if (!n.contains("$") && !n.contains(".")) {
                try {
                    Class.forName(n, false, origLoader).getMethod("run");
                    fixtures.add(n);
                } catch (NoSuchMethodException e) {
                    // not a fixture
                }
            }
        for (String n : fixtures) {
            String expected = call(Class.forName(n, true, origLoader));
            tracker.getMethod("reset").invoke(null);
            String got = call(Class.forName(n, true, rwLoader));
            long entries = ((java.util.concurrent.atomic.AtomicLong) tracker.getField("entries").get(null)).get();
            long exits = ((java.util.concurrent.atomic.AtomicLong) tracker.getField("exits").get(null)).get();
            List<?> bad = new ArrayList<>((List<?>) tracker.getField("bad").get(null));
            List<?> unwound = new ArrayList<>((List<?>) tracker.getField("unwound").get(null));
            List<?> open = (List<?>) tracker.getMethod("open").invoke(null);
            System.out.println(n + ": entries " + entries + ", exits " + exits + ", unwound " + unwound.size());
            if (!expected.equals(got))
                fail(n + ": transcript differs\n--- original:\n" + expected + "\n--- rewritten:\n" + got);
            if (expected.startsWith("exception") || expected.startsWith("cannot"))
                fail(n + ": run() itself failed: " + expected);
            if (entries == 0)
                fail(n + ": the tracker saw no entries: not instrumented?");
            if (!bad.isEmpty())
                fail(n + ": unexpected exits " + bad);
            if (!open.isEmpty())
                fail(n + ": frames never closed " + open);
            for (Object u : unwound)
                if (!u.toString().contains(".<init>("))
                    fail(n + ": a non-constructor frame closed without its exit: " + u);
            for (Object u : unwound)
                System.out.println("  unwound (constructor whose superclass constructor threw): " + u);
        }
        if (fixtures.isEmpty())
            fail("no fixture found");
        System.out.println(failures == 0 ? "PASS " + fixtures.size() + " fixtures" : "FAILED: " + failures);
        System.exit(failures == 0 ? 0 : 1);
    }
}
