/* cpu=samples accuracy: the thread "busy" spends three times as long in hotA as in hotB (the
 * same loop, three times the iterations), while idle threads sit in a socket read that never
 * returns, Thread.sleep, LockSupport.park, Object.wait and a monitor entry. With the argument
 * "native", a thread "native-busy" also compresses data in Deflater's native code.
 * Prints "busy-cpu-ms N": the CPU time the busy thread used, to compare with its samples.
 * The busy thread runs until it has used <milliseconds> of CPU time (not wall time: on a loaded
 * machine a wall-time run got too few samples to judge), or twenty times that in wall time.
 * Usage: CpuBusy <milliseconds> [native] */
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.Deflater;

public class CpuBusy {
    static volatile long sink;
    static final Object waitLock = new Object();
    static final Object heldLock = new Object();

    static long hotA(long n) {
        long x = sink;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static long hotB(long n) {
        long x = sink;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        boolean withNative = args.length > 1 && args[1].equals("native");
        InetAddress lo = InetAddress.getLoopbackAddress();
        ServerSocket server = new ServerSocket(0, 1, lo);
        Socket client = new Socket(lo, server.getLocalPort());
        Socket accepted = server.accept(); // kept open, never written to
        CountDownLatch reading = new CountDownLatch(1);
        daemon("idle-socket", () -> {
            try (InputStream in = client.getInputStream()) {
                reading.countDown();
                in.read();
            } catch (Exception e) {
                // closed at exit
            }
        });
        daemon("idle-sleep", () -> {
            synchronized (heldLock) { // also keeps idle-blocked waiting to enter
                while (true) {
                    try {
                        Thread.sleep(3_600_000);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        });
        daemon("idle-park", () -> {
            while (true)
                LockSupport.park();
        });
        daemon("idle-wait", () -> {
            synchronized (waitLock) {
                while (true) {
                    try {
                        waitLock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        });
        Thread.sleep(50); // idle-sleep takes heldLock first
        daemon("idle-blocked", () -> {
            synchronized (heldLock) {
                sink++;
            }
        });
        reading.await();
        if (withNative) {
            daemon("native-busy", () -> {
                byte[] data = new byte[1 << 20];
                long x = 1;
                for (int i = 0; i < data.length; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                    data[i] = (byte) ((x >>> 60) + 'a'); // 16 letters: compressible, not trivial
                }
                byte[] out = new byte[data.length + 1024];
                Deflater d = new Deflater(9);
                while (true) {
                    d.reset();
                    d.setInput(data);
                    d.finish();
                    while (!d.finished())
                        sink += d.deflate(out);
                }
            });
        }
        Thread busy = new Thread(() -> {
            var mx = ManagementFactory.getThreadMXBean();
            long budget = millis * 1_000_000L, wallEnd = System.nanoTime() + 20 * budget;
            while (mx.getCurrentThreadCpuTime() < budget && System.nanoTime() < wallEnd) {
                sink += hotA(300_000);
                sink += hotB(100_000);
            }
            long cpu = mx.getCurrentThreadCpuTime();
            System.out.println("busy-cpu-ms " + cpu / 1_000_000);
        }, "busy");
        busy.start();
        System.out.println("cpu-busy ready");
        System.out.flush();
        busy.join();
        System.out.println("cpu-busy done");
        accepted.close();
    }
}
