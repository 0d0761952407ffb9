/* The README's demo: a small program with clear allocation sites and a busy method, so every
 * profile has something to show. */
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Demo {
    record Point(int x, int y) {}

    static List<Point> makePoints(int n) {
        List<Point> points = new ArrayList<>();
        for (int i = 0; i < n; i++)
            points.add(new Point(i, i * 2));
        return points;
    }

    static Map<String, int[]> makeTable(int n) {
        Map<String, int[]> table = new HashMap<>();
        for (int i = 0; i < n; i++)
            table.put("key" + i, new int[8]);
        return table;
    }

    static long spin(int rounds) {
        long h = 0;
        for (int i = 0; i < rounds; i++)
            h = h * 31 + (i ^ (h >>> 7));
        return h;
    }

    public static void main(String[] args) throws Exception {
        List<Point> points = makePoints(50_000);
        Map<String, int[]> table = makeTable(20_000);
        Thread worker = new Thread(() -> System.out.println("spin " + spin(50_000_000)), "demo-worker");
        worker.start();
        worker.join();
        System.out.println("demo: " + points.size() + " points, " + table.size() + " table entries");
    }
}
