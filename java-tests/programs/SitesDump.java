import java.util.ArrayList;
import java.util.List;

/**
 * Known numbers of live objects at known allocation sites, for heap dumps that carry each
 * object's site (DumpSitesTest): several classes, object and primitive arrays, objects made by
 * reflection and by the JDK on the program's behalf (a String's byte[] inside new String).
 * Everything made here stays reachable until the exit dump.
 */
public class SitesDump {
    static final int LEAVES = 3000, NODES = 2000, INTS = 1500, ARRAYS = 700, REFLECTED = 400,
            STRINGS = 900;

    static class Leaf {
        int v;
        Leaf(int v) { this.v = v; }
    }

    static class Node {
        Object a, b;
    }

    static class Made {
        long x;
        public Made() {}
    }

    static final List<Object> KEEP = new ArrayList<>(16384);

    static void makeLeaves() {
        for (int i = 0; i < LEAVES; i++)
            KEEP.add(new Leaf(i));
    }

    static void makeNodes() {
        for (int i = 0; i < NODES; i++)
            KEEP.add(new Node());
    }

    static void makeInts() {
        for (int i = 0; i < INTS; i++)
            KEEP.add(new int[i % 17]);
    }

    static void makeArrays() {
        for (int i = 0; i < ARRAYS; i++)
            KEEP.add(new Leaf[i % 5 + 1]);
    }

    static void makeReflected() throws Exception {
        for (int i = 0; i < REFLECTED; i++)
            KEEP.add(Made.class.getDeclaredConstructor().newInstance());
    }

    static void makeStrings() {
        // Not a literal: resolving one makes a String here too.
        char[] chars = {'s', 'i', 't', 'e', 's', ' ', 'o', 'f', ' ', 's', 't', 'r', 'i', 'n', 'g'};
        for (int i = 0; i < STRINGS; i++)
            KEEP.add(new String(chars, 0, 1 + i % chars.length));
    }

    public static void main(String[] args) throws Exception {
        makeLeaves();
        makeNodes();
        makeInts();
        makeArrays();
        makeReflected();
        makeStrings();
        System.out.println("made " + KEEP.size());
    }
}
