/* Benchmark workload: a large live heap to be dumped (heap=dump against jcmd GC.heap_dump).
 *
 *   java -Xmx<...> BigHeap <live MiB>
 *
 * Builds about <live MiB> of reachable objects from a fixed seed, shaped like an application
 * heap: a quarter in small linked objects (binary trees of nodes holding boxed values and
 * short strings), a fifth in a HashMap from strings to int arrays, the rest in primitive
 * arrays of mixed sizes (compressible contents, as real data is) and object arrays pointing
 * into all of it. Then runs a full GC and prints
 *   READY used=<bytes in use after the GC> objects=<objects allocated>
 * and waits for commands on stdin, one per line:
 *   gc     run System.gc() and print "GC done"
 *   exit   print "result: objects=<n> checksum=<hex>" and exit with status 0
 * (end of input is the same as exit). The harness takes its dumps while the program waits. */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

public class BigHeap {
    static final class Node {
        Node left, right;
        final long key;
        Object payload;

        Node(long key, Object payload) {
            this.key = key;
            this.payload = payload;
        }
    }

    static final List<Object> roots = new ArrayList<>();
    static long objects;

    static Node tree(SplittableRandom rnd, int depth, long key) {
        Object payload = switch ((int) (key % 3)) {
        case 0 -> Long.valueOf(key * 7919);
        case 1 -> "n" + key;
        default -> null;
        };
        objects += payload == null ? 1 : payload instanceof String ? 3 : 2;
        Node n = new Node(key, payload);
        if (depth > 0) {
            n.left = tree(rnd, depth - 1, key * 2);
            n.right = tree(rnd, depth - 1, key * 2 + 1);
        }
        return n;
    }

    static Object primitiveArray(SplittableRandom rnd, int bytes) {
        objects++;
        switch (rnd.nextInt(3)) {
        case 0: {
            long[] a = new long[bytes / 8];
            for (int i = 0; i < a.length; i++)
                a[i] = i % 64 == 0 ? rnd.nextLong() : i;
            return a;
        }
        case 1: {
            int[] a = new int[bytes / 4];
            for (int i = 0; i < a.length; i++)
                a[i] = rnd.nextInt(1000);
            return a;
        }
        default: {
            byte[] a = new byte[bytes];
            for (int i = 0; i < a.length; i++)
                a[i] = (byte) ('a' + rnd.nextInt(26));
            return a;
        }
        }
    }

    public static void main(String[] args) throws Exception {
        long target = (args.length > 0 ? Long.parseLong(args[0]) : 1024) << 20;
        SplittableRandom rnd = new SplittableRandom(2024);

        // About 25%: trees of 2^16-1 nodes (a node with its payload is roughly 50 bytes).
        long treeBytes = target / 4, perTree = ((1L << 16) - 1) * 50;
        for (long t = 0; t * perTree < treeBytes; t++)
            roots.add(tree(rnd, 15, 1 + t));

        // About 20%: a map from strings to small int arrays (roughly 160 bytes an entry).
        Map<String, int[]> map = new HashMap<>();
        for (long i = 0, n = target / 5 / 160; i < n; i++) {
            int[] v = new int[4 + rnd.nextInt(16)];
            v[0] = (int) i;
            map.put("key-" + i + "-" + rnd.nextInt(1000), v);
        }
        objects += map.size() * 4L + 1;
        roots.add(map);

        // The rest: primitive arrays from 256 bytes to 256 KiB, referenced from object arrays.
        long arrayBytes = target - target / 4 - target / 5;
        Object[] chunk = null;
        int used = 0;
        for (long done = 0; done < arrayBytes;) {
            int bytes = 256 << rnd.nextInt(11);
            if (chunk == null || used == chunk.length) {
                chunk = new Object[1024];
                used = 0;
                roots.add(chunk);
                objects++;
            }
            chunk[used++] = primitiveArray(rnd, bytes);
            done += bytes;
        }

        System.gc();
        Runtime rt = Runtime.getRuntime();
        System.out.println("READY used=" + (rt.totalMemory() - rt.freeMemory()) + " objects=" + objects);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null && !line.equals("exit");) {
            if (line.equals("gc")) {
                System.gc();
                System.out.println("GC done");
                System.out.flush();
            }
        }
        long checksum = 0;
        for (Object o : roots)
            checksum = checksum * 31 + (o instanceof Object[] a ? a.length : o instanceof Map<?, ?> m ? m.size() : 1);
        System.out.println("result: objects=" + objects + " checksum=" + Long.toHexString(checksum));
    }
}
