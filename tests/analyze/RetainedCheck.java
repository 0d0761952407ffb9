import java.io.File;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

/**
 * The independent oracle of hprof-analyze's retained sizes: VisualVM's heap library
 * (org-graalvm-visualvm-lib-jfluid-heap.jar). Prints "id_hex shallow retained class" for the
 * N objects it finds biggest by retained size.
 *   java -cp jfluid-heap.jar:. RetainedCheck DUMP N
 */
public class RetainedCheck {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        List<Instance> top = heap.getBiggestObjectsByRetainedSize(Integer.parseInt(args[1]));
        for (Instance i : top)
            System.out.println(Long.toHexString(i.getInstanceId()) + " " + i.getSize() + " "
                               + i.getRetainedSize() + " " + i.getJavaClass().getName());
    }
}
