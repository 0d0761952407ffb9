package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** cpu=times on a thread whose classes unload while it runs (TimesUnloadProgram: 2,400 copies
 *  of BudgetT in 8 loaders, each loader collected before the next batch): the call paths of the
 *  unloaded classes are folded into the totals during the run (the verbose line counts them),
 *  and every copy's method still has exactly its calls in CPU TIME. */
class CpuTimesUnloadTest {
    static final int CLASSES = 8 * 300, RUNS = 2;
    static final Pattern FOLDED = Pattern.compile("(\\d+) call paths of unloaded classes folded");
    static final Pattern COPY = Pattern.compile("BudgetT_(\\p{XDigit}{8})\\.(run|\\w_\\1)");

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void unloadedPathsKeepTheirCounts(int feature) throws Exception {
        Path dir = Jvm.workDir("cpu-times-unload-" + feature);
        Jvm.Result r = Jvm.runClean(Jvm.jdkOrSkip(feature), dir,
                                    List.of("-Xmx64m", Jvm.agentpath("cpu=times,cutoff=0")),
                                    "TimesUnloadProgram");
        assertTrue(r.out().contains("loaders collected: 8 of 8"), r.describe());
        Matcher m = FOLDED.matcher(r.err());
        assertTrue(m.find(), r.err());
        assertTrue(Long.parseLong(m.group(1)) > 0, "nothing folded:\n" + r.describe());
        CpuTimesTest.CpuTime t = CpuTimesTest.CpuTime.read(dir.resolve("java.hprof.txt"));
        Map<String, Long> calls = new HashMap<>();
        for (CpuTimesTest.Row row : t.rows) {
            Matcher c = COPY.matcher(row.method());
            if (c.matches())
                calls.merge(row.method(), row.count(), Long::sum);
        }
        // per run(): run once, a, b, c, d once each
        assertEquals(CLASSES * 5, calls.size(), "every method of every copy has rows");
        calls.forEach((method, n) -> assertEquals(RUNS, n, method));
    }
}
