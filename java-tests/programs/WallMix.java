import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.Semaphore;

/**
 * wall=y's accuracy and rate program. A "request" thread repeats, for the given milliseconds,
 * a cycle of about 100 ms: 50 ms blocked in a socket read (the "writer" thread sends one byte
 * 50 ms after the request asks for it), 30 ms computing, 20 ms blocked entering a monitor the
 * "holder" thread keeps for 20 ms (readPhase, compute, lockPhase). Each phase is measured with System.nanoTime and printed as
 * "phase-ms read R compute C lock L", so a test compares the profile with what really
 * happened. A "short" thread sleeps 1 s; its run() and main's start() to join() are timed.
 */
public class WallMix {
    static final Object LOCK = new Object();
    static volatile long sink;

    static void compute(long nanos) {
        long end = System.nanoTime() + nanos, x = sink;
        while (System.nanoTime() < end)
            for (int i = 0; i < 1000; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
        sink = x;
    }

    static void enterLock() {
        synchronized (LOCK) {
            sink++;
        }
    }

    /** The read phase: ask the writer for a byte, wait for it in the socket read. */
    static void readPhase(Semaphore writerGo, InputStream in) throws Exception {
        writerGo.release();
        in.read();
    }

    /** The lock phase: let the holder take LOCK, then wait to enter it. */
    static void lockPhase(Semaphore holderGo, Semaphore holderHas) throws Exception {
        holderGo.release();
        holderHas.acquire();
        enterLock();
    }

    public static void main(String[] args) throws Exception {
        long runMs = Long.parseLong(args[0]);
        ServerSocket server = new ServerSocket(0);
        Socket client = new Socket("127.0.0.1", server.getLocalPort());
        Socket peer = server.accept();
        InputStream in = client.getInputStream();
        OutputStream out = peer.getOutputStream();
        Semaphore writerGo = new Semaphore(0), holderGo = new Semaphore(0), holderHas = new Semaphore(0);
        long[] phases = new long[3];

        Thread holder = new Thread(() -> {
            try {
                while (true) {
                    holderGo.acquire();
                    synchronized (LOCK) {
                        holderHas.release();
                        Thread.sleep(20);
                    }
                }
            } catch (InterruptedException e) {
                // done
            }
        }, "holder");
        Thread writer = new Thread(() -> {
            try {
                while (true) {
                    writerGo.acquire();
                    Thread.sleep(50);
                    out.write(1);
                    out.flush();
                }
            } catch (Exception e) {
                // done
            }
        }, "writer");
        Thread request = new Thread(() -> {
            try {
                long end = System.nanoTime() + runMs * 1_000_000L;
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    readPhase(writerGo, in);
                    long t1 = System.nanoTime();
                    compute(30_000_000L);
                    long t2 = System.nanoTime();
                    lockPhase(holderGo, holderHas);
                    long t3 = System.nanoTime();
                    phases[0] += t1 - t0;
                    phases[1] += t2 - t1;
                    phases[2] += t3 - t2;
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "request");
        for (Thread t : new Thread[] {holder, writer})
            t.setDaemon(true);
        holder.start();
        writer.start();
        request.start();

        // Its life as it measures it, from the first to the last instruction of run(), and as main
        // sees it, from start() to the end of join(): the agent counts from ThreadStart to
        // ThreadEnd, which lie between the two.
        Thread shortLived = new Thread(() -> {
            long s0 = System.nanoTime();
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                // done
            }
            System.out.println("short-life-ms " + (System.nanoTime() - s0) / 1_000_000);
        }, "short");
        long s0 = System.nanoTime();
        shortLived.start();
        shortLived.join();
        System.out.println("short-start-to-join-ms " + (System.nanoTime() - s0) / 1_000_000);
        request.join();
        System.out.println("phase-ms read " + phases[0] / 1_000_000 + " compute " + phases[1] / 1_000_000
                + " lock " + phases[2] / 1_000_000);
    }
}
