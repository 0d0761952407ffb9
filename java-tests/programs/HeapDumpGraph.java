import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.concurrent.CountDownLatch;

/**
 * A known object graph for heap dump tests: linked nodes, arrays of every primitive type, a
 * class with a field of every type and static fields of every type, strings, a HashMap, a
 * local variable held on a thread's stack.
 *
 *   HeapDumpGraph exit                   build the graph and exit (the agent dumps at exit)
 *   HeapDumpGraph wait GO [HOTSPOT]      build it, print "graph ready", wait until file GO
 *                                        exists; then, given HOTSPOT, let HotSpot dump the
 *                                        heap there (HotSpotDiagnosticMXBean, live objects,
 *                                        once before "graph ready" too, to a file it deletes,
 *                                        so that what dumping loads is there for both dumps);
 *                                        print "graph done" and exit
 */
public class HeapDumpGraph {
    /** An interface constant: it takes JVMTI field index 0 of every implementing class. */
    interface Marker {
        int MARK = 11;
    }

    static class Base {
        static long BASE_STATIC = 5;
        int baseInt = 77;
        Object baseRef = "base-ref";
    }

    static final class AllTypes extends Base implements Marker {
        static boolean SZ = true;
        static byte SB = -5;
        static char SC = 'x';
        static short SS = 300;
        static int SI = 42;
        static long SJ = 1L << 40;
        static float SF = 3.5f;
        static double SD = 6.25;
        static Object SO = new Leaf();
        static String SSTR = "static-string";

        boolean z = true;
        byte b = -7;
        char c = 'Q';
        short s = -1234;
        int i = 123456789;
        long j = -9876543210L;
        float f = 1.5f;
        double d = -2.25;
        Object o; // null
        String str = "all-types-string";
        int[] ints = {1, 2, 3};
    }

    static final class Node {
        final Node next;
        final int value;

        Node(Node next, int value) {
            this.next = next;
            this.value = value;
        }
    }

    /** No fields at all. */
    static final class Leaf {}

    /** Only held by a local variable of the "holder" thread. */
    static final class StackHeld {
        final long mark = 0x5EED;
    }

    static final int NODES = 1000;
    static final int MAP_ENTRIES = 100;

    static Node head;
    static AllTypes allTypes;
    static boolean[] booleans = {true, false, true};
    static byte[] bytes = {1, -2, 3, -4};
    static char[] chars = "chars".toCharArray();
    static short[] shorts = {1, -1, 300, -300, 32767, -32768};
    static int[] ints = {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 7, 8};
    static long[] longs = {0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 33, -(1L << 33), 9};
    static float[] floats = {0f, 1.5f, -2.5f, Float.MAX_VALUE, Float.MIN_VALUE, 1e-3f, -1e3f, 7f, 0.25f};
    static double[] doubles = {0, 1.5, -2.5, Double.MAX_VALUE, Double.MIN_VALUE, 1e-300, -1e300, 7, 0.25, 42.125};
    static Object[] objects;
    static Leaf[] leaves;
    static int[][] matrix = {{1, 2}, {3}};
    static Object[] emptyObjects = new Object[0];
    static int[] emptyInts = new int[0];
    static HashMap<String, Integer> map;
    static String latin1 = "heap dump string";
    static String utf16 = "heap dump \u00e9t\u00e9 \u2603";

    static void build() {
        for (int i = 0; i < NODES; i++)
            head = new Node(head, i);
        allTypes = new AllTypes();
        leaves = new Leaf[5];
        for (int i = 0; i < leaves.length; i++)
            leaves[i] = new Leaf();
        objects = new Object[11];
        objects[0] = latin1;
        objects[2] = leaves[0];
        objects[3] = new Leaf();
        objects[5] = ints;
        objects[10] = objects; // refers to itself
        map = new HashMap<>();
        for (int i = 0; i < MAP_ENTRIES; i++)
            map.put("key" + i, i);
    }

    public static void main(String[] args) throws Exception {
        build();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            StackHeld local = new StackHeld();
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                return;
            }
            if (local.mark != 0x5EED)
                throw new AssertionError();
        }, "holder");
        holder.setDaemon(true);
        holder.start();
        held.await();

        if (args[0].equals("wait")) {
            Path go = Path.of(args[1]);
            com.sun.management.HotSpotDiagnosticMXBean hotspot =
                    ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (args.length > 2) {
                // A first HotSpot dump loads and links what dumping takes (reflection,
                // logging, file permissions), so both dumps see the same classes.
                Path warmup = Path.of(args[2] + ".warmup.hprof");
                for (int i = 0; i < 2; i++) { // the second call still loads classes
                    hotspot.dumpHeap(warmup.toString(), true);
                    Files.delete(warmup);
                }
            }
            System.gc();
            System.out.println("graph ready");
            System.out.flush();
            while (!Files.exists(go))
                Thread.sleep(20);
            if (args.length > 2)
                hotspot.dumpHeap(args[2], true);
        }
        System.out.println("graph done");
        System.out.flush();
        // The daemon holder keeps waiting (and its local alive) through the exit dump.
    }
}
