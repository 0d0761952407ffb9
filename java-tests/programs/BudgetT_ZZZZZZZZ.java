/* The template BudgetProgram copies under new names (ZZZZZZZZ replaced by a hex number): per
 * run(), 5 calls of its own methods (run, a, c, b, d) and 4 arrays of its own class, each on a
 * stack no other copy has. It names no other class (no class to resolve, so no class loader
 * code runs) and calls no JDK method: under cpu=times the calls of a thread that only runs
 * copies are exactly theirs, and under heap=sites every BudgetT_*[] is one of these arrays. */
public class BudgetT_ZZZZZZZZ implements Runnable {
    static Object sink;

    public void run() {
        a_ZZZZZZZZ(1);
        b_ZZZZZZZZ(1);
    }

    void a_ZZZZZZZZ(int n) {
        sink = new BudgetT_ZZZZZZZZ[1];
        if (n > 0)
            c_ZZZZZZZZ(n - 1);
    }

    void b_ZZZZZZZZ(int n) {
        sink = new BudgetT_ZZZZZZZZ[1];
        if (n > 0)
            d_ZZZZZZZZ(n - 1);
    }

    void c_ZZZZZZZZ(int n) {
        sink = new BudgetT_ZZZZZZZZ[n + 1];
    }

    void d_ZZZZZZZZ(int n) {
        sink = new BudgetT_ZZZZZZZZ[n + 1];
    }
}
