public class Prof {
    static final Object lock = new Object();
    static int[] keep;
    static long sink;
    static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += i * 31L ^ (s >>> 3); return s; }
    static int[] alloc(int n) { return new int[n]; }
    public static void main(String[] a) throws Exception {
        for (int i = 0; i < 1000; i++) keep = alloc(100);
        Thread[] t = new Thread[2];
        for (int k = 0; k < 2; k++) { t[k] = new Thread(() -> { for (int j = 0; j < 50; j++) synchronized (lock) { sink += work(200000); } }); t[k].start(); }
        for (Thread x : t) x.join();
        sink += work(20000000);
    }
}
