import java.util.*;
/** Builds a live heap of about N MB of mixed objects, then waits. */
public class MixedHeap {
    static final class Node { Node next; int id; long stamp; String name; Object payload; }
    static Object keep;
    public static void main(String[] a) throws Exception {
        long mb = Long.parseLong(a[0]);
        long target = mb << 20;
        List<Object> roots = new ArrayList<>();
        long bytes = 0; int i = 0;
        Random r = new Random(42);
        while (bytes < target) {
            switch (i % 8) {
                case 0: { // a HashMap of 1000 Integer->String
                    HashMap<Integer,String> m = new HashMap<>();
                    for (int k = 0; k < 1000; k++) m.put(i * 1000 + k, "s" + k);
                    roots.add(m); bytes += 1000 * (32 + 16 + 24 + 24 + 8) + 8192; break; }
                case 1: { // a linked list of 1000 nodes
                    Node head = null;
                    for (int k = 0; k < 1000; k++) { Node n = new Node(); n.next = head; n.id = k; head = n; }
                    roots.add(head); bytes += 1000 * 40; break; }
                case 2: roots.add(new byte[4000 + r.nextInt(8000)]); bytes += 8000; break;
                case 3: roots.add(new int[1000 + r.nextInt(2000)]); bytes += 8000; break;
                case 4: { Object[] arr = new Object[200]; for (int k = 0; k < 200; k += 2) arr[k] = Long.valueOf(k * 1000L + i); roots.add(arr); bytes += 200 * 8 + 100 * 24; break; }
                case 5: { ArrayList<String> l = new ArrayList<>(); for (int k = 0; k < 300; k++) l.add("str" + (i + k)); roots.add(l); bytes += 300 * (24 + 24 + 8); break; }
                case 6: roots.add(new char[2000 + r.nextInt(2000)]); bytes += 6000; break;
                case 7: roots.add(new long[500 + r.nextInt(1000)]); bytes += 8000; break;
            }
            i++;
        }
        keep = roots;
        System.gc();
        Runtime rt = Runtime.getRuntime();
        System.out.println("ready " + ((rt.totalMemory() - rt.freeMemory()) >> 20) + " MB used, pid " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.parseLong(a.length > 1 ? a[1] : "3600000"));
    }
}
