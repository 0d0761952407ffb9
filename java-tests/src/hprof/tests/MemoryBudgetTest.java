package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import hprof.tests.SitesReport.Dump;
import hprof.tests.SitesReport.Site;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * memory=: with a budget the agent's tables pass early (8 MB: its tables start at about 5), the
 * stacks met afterwards are counted under the overflow trace, one line on stderr says so once,
 * and every count still adds up to the program's true totals (BudgetProgram: 45,000 calls of
 * its generated methods on one thread, 36,000 arrays of its generated classes), under heap=sites
 * and cpu=times, on every JDK the suite runs (Jvm.jdks).
 */
class MemoryBudgetTest {
    static final String OVERFLOW = "<memory_budget_reached>.<new_stacks>";
    static final long CALLS = 3000 * 3 * 5, ARRAYS = 3000 * 3 * 4;

    static Jvm.Result run(int feature, Path dir, String options) throws Exception {
        Jvm.Result r = Jvm.run(Jvm.jdkOrSkip(feature), dir, List.of(Jvm.agentpath(options)),
                               "BudgetProgram");
        assertEquals(0, r.exit(), r.describe());
        assertFalse(r.err().contains("HPROF ERROR"), r.describe());
        long lines = r.err().lines().filter(l -> l.contains("reached memory=8 (MB)")).count();
        assertEquals(1, lines, "one line says the budget was reached:\n" + r.err());
        return r;
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void sitesAddUpPastTheBudget(int feature) throws Exception {
        Path dir = Jvm.workDir("budget-sites-" + feature);
        run(feature, dir, "heap=sites,cutoff=0,memory=8");
        SitesReport r = SitesReport.ascii(dir.resolve("java.hprof.txt"));
        Dump d = r.last();
        List<Site> arrays = d.sites().stream().filter(s -> s.cls().matches("BudgetT_\\w+\\[\\]")).toList();
        assertEquals(ARRAYS, SitesReport.sum(arrays, Site::allocObjs), "arrays of the copies");
        long overflow = arrays.stream()
                            .filter(s -> r.trace(s).methods().equals(List.of(OVERFLOW)))
                            .mapToLong(Site::allocObjs).sum();
        assertTrue(overflow > 0 && overflow < ARRAYS,
                   "some arrays counted before the budget, some under " + OVERFLOW + ": " + overflow);
    }

    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void callsAddUpPastTheBudget(int feature) throws Exception {
        Path dir = Jvm.workDir("budget-times-" + feature);
        run(feature, dir, "cpu=times,thread=y,cutoff=0,memory=8");
        CpuTimesTest.CpuTime t = CpuTimesTest.CpuTime.read(dir.resolve("java.hprof.txt"));
        long worker = 0, overflow = 0;
        for (CpuTimesTest.Row row : t.rows) {
            if (!"budget-worker".equals(t.threadNames.get(t.traceThread.get(row.trace()))))
                continue;
            worker += row.count();
            if (row.method().equals(OVERFLOW))
                overflow += row.count();
        }
        // The worker's calls: BudgetProgram$Worker.run, BudgetProgram.work and the copies'.
        assertEquals(CALLS + 2, worker, "calls on budget-worker");
        assertTrue(overflow > 0, "calls counted under " + OVERFLOW);
    }
}
