/* A monitor in a known state, for a MONITOR DUMP taken with SIGQUIT while it lasts:
 *   "notifiee"   waits on the Vault (Object.wait, no timeout): waiting to be notified, CW
 *   "holder"     owns the Vault, entered twice (entry count 2), sleeping: SL
 *   "blocked-1", "blocked-2"  wait to enter the Vault: MW
 * Prints "ready" once every thread is in that state, then holds it until the file named by
 * args[0] exists (or 60 s pass); then lets everyone finish and prints "held done". */
import java.nio.file.Files;
import java.nio.file.Path;

public class MonitorHeld {
    static final class Vault {}

    static final Vault VAULT = new Vault();
    static volatile boolean released;

    static void awaitNotify() throws InterruptedException {
        synchronized (VAULT) {
            while (!released)
                VAULT.wait(); // NOTIFIEE WAITS HERE
        }
    }

    static void hold() {
        synchronized (VAULT) {
            synchronized (VAULT) {
                try {
                    Thread.sleep(60_000); // HOLDER SLEEPS HERE
                } catch (InterruptedException e) {
                    // the test is done
                }
                released = true;
                VAULT.notifyAll();
            }
        }
    }

    static void enter() {
        synchronized (VAULT) { // BLOCKED HERE
            released = true;
        }
    }

    static void awaitState(Thread t, Thread.State s) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (t.getState() != s) {
            if (System.nanoTime() > deadline)
                throw new IllegalStateException(t.getName() + " never became " + s);
            Thread.sleep(5);
        }
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        Path stop = Path.of(args[0]);
        Thread notifiee = start("notifiee", () -> {
            try {
                awaitNotify();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        awaitState(notifiee, Thread.State.WAITING);
        Thread holder = start("holder", MonitorHeld::hold);
        awaitState(holder, Thread.State.TIMED_WAITING);
        Thread b1 = start("blocked-1", MonitorHeld::enter);
        Thread b2 = start("blocked-2", MonitorHeld::enter);
        awaitState(b1, Thread.State.BLOCKED);
        awaitState(b2, Thread.State.BLOCKED);
        System.out.println("ready");
        System.out.flush();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(stop) && System.nanoTime() < deadline)
            Thread.sleep(10);
        holder.interrupt();
        for (Thread t : new Thread[] {notifiee, holder, b1, b2})
            t.join();
        System.out.println("held done");
    }
}
