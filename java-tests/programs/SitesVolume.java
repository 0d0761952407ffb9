/* Enough allocation for heap=sites' sampled mode to estimate (HeapSitesTest): 400000 small
 * Cells of which a quarter are kept, and 200 arrays of 256 KiB (far larger than the sampling
 * interval of the test, so each one is sampled) of which a quarter are kept. */
public class SitesVolume {
    static class Cell {
        long a;
        int b;
        Cell next;
    }

    static volatile Object sink;
    static Object[] keptCells = new Object[100_000];
    static Object[] keptArrays = new Object[50];

    static void fill() {
        for (int i = 0; i < 400_000; i++) {
            Cell c = new Cell();
            sink = c;
            if (i % 4 == 0)
                keptCells[i / 4] = c;
        }
        for (int i = 0; i < 200; i++) {
            long[] big = new long[32 * 1024];
            sink = big;
            if (i % 4 == 0)
                keptArrays[i / 4] = big;
        }
    }

    public static void main(String[] args) {
        fill();
        sink = null;
        System.gc();
        System.out.println("volume done");
    }
}
