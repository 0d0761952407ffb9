/**
 * A known object graph for the OpenJ9 formats (format=phd, format=classic): PhdTest counts
 * these objects and their references in the dumps.
 *
 *   1000 Pair     each: left, right (two Leaf of its own), self = null
 *   2000 Leaf     no references
 *     50 Wide     each: ten references to Leaf objects (shared), over the 7 a medium record holds
 *      1 Leaf[]   length 300, every third element set (100 references)
 *      1 Leaf[]   length 0
 *   int[] of lengths 0, 128, 255, 32768, 65535 (primitive arrays at the size-code edges)
 *
 *   PhdGraph exit      build the graph, print "graph done", exit (the agent dumps at exit)
 */
public class PhdGraph {
    static final class Leaf {
        final int v;
        Leaf(int v) { this.v = v; }
    }

    static final class Pair {
        final Leaf left, right;
        Pair self; // null
        Pair(int i) { left = new Leaf(2 * i); right = new Leaf(2 * i + 1); }
    }

    static final class Wide {
        Object r0, r1, r2, r3, r4, r5, r6, r7, r8, r9;
        Wide(Pair[] p, int i) {
            r0 = p[i].left; r1 = p[i + 1].left; r2 = p[i + 2].left; r3 = p[i + 3].left;
            r4 = p[i + 4].left; r5 = p[i].right; r6 = p[i + 1].right; r7 = p[i + 2].right;
            r8 = p[i + 3].right; r9 = p[i + 4].right;
        }
    }

    static Pair[] pairs;
    static Wide[] wides;
    static Leaf[] sparse = new Leaf[300];
    static Leaf[] empty = new Leaf[0];
    static int[][] ints;

    public static void main(String[] args) {
        Pair[] p = new Pair[1000];
        for (int i = 0; i < p.length; i++)
            p[i] = new Pair(i);
        Wide[] w = new Wide[50];
        for (int i = 0; i < w.length; i++)
            w[i] = new Wide(p, 10 * i);
        for (int i = 0; i < sparse.length; i += 3)
            sparse[i] = p[i].left;
        ints = new int[][] {new int[0], new int[128], new int[255], new int[32768], new int[65535]};
        pairs = p;
        wides = w;
        System.out.println("graph done");
    }
}
