/* The smallest useful program: starts and ends a thread, allocates a little, exits 0. */
public class Hello {
    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(() -> {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 1000; i++)
                sb.append(i);
            System.out.println("worker built " + sb.length() + " chars");
        }, "hello-worker");
        worker.start();
        worker.join();
        System.out.println("hello done");
    }
}
