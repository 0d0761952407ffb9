/* Whole-process cpu=samples: a program whose garbage collector uses a large share of the CPU.
 * A large live set (an array of small linked nodes) is replaced piece by piece with new nodes
 * for the given milliseconds of wall time, so every young collection copies survivors and old
 * collections have a lot to mark, until the process has used the given CPU time (or 60 s of
 * wall time passed: a loaded machine). Prints ProcCpu's line at the end.
 * Usage: GcHeavy <CPU milliseconds> <live nodes> */
public class GcHeavy {
    static final class Node {
        Node next;
        long a, b;
        Node(Node next, long a) {
            this.next = next;
            this.a = a;
            this.b = a * 31 + 7;
        }
    }

    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        int live = Integer.parseInt(args[1]);
        Node[] slots = new Node[live / 4];
        long seed = 42, sum = 0;
        ProcCpu.start();
        long end = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < end && ProcCpu.processMs() < millis) {
            for (int k = 0; k < 10000; k++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                int i = (int) ((seed >>> 33) % slots.length);
                slots[i] = new Node(new Node(new Node(new Node(null, seed), k), i), sum);
                sum += slots[i].b;
            }
        }
        System.out.println("sum " + sum);
        System.out.println(ProcCpu.line());
    }
}
