/* Stays alive until the file named by args[0] exists (or 60 s pass), allocating a little, so a
 * test can attach to it; then exits 0. */
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public class Sleeper {
    static List<int[]> kept = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        Path stop = Path.of(args[0]);
        System.out.println("sleeper ready");
        System.out.flush();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(stop) && System.nanoTime() < deadline) {
            kept.add(new int[16]);
            if (kept.size() > 1000)
                kept.clear();
            Thread.sleep(20);
        }
        System.out.println("sleeper done");
    }
}
