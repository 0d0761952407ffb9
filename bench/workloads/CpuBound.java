/* Benchmark workload: CPU-bound microbenchmark that allocates next to nothing.
 *
 *   java CpuBound <threads> <rounds>
 *
 * Each thread runs <rounds> rounds of four kernels with different call densities: a recursive
 * Fibonacci (a call every few instructions: the worst case for cpu=times), a prime sieve
 * (tight loops, no calls), a 64x64 matrix product (floating point, few calls) and a string
 * hash over a char table (small method calls in a loop). Prints one line
 *   result: threads=<t> rounds=<r> checksum=<hex>
 * which is the same in every run. */
public class CpuBound {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static int sieve(int limit, boolean[] composite) {
        java.util.Arrays.fill(composite, false);
        int count = 0;
        for (int i = 2; i < limit; i++) {
            if (composite[i])
                continue;
            count++;
            for (long j = (long) i * i; j < limit; j += i)
                composite[(int) j] = true;
        }
        return count;
    }

    static double matmul(double[] a, double[] b, double[] c, int n) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int k = 0; k < n; k++)
                    s += a[i * n + k] * b[k * n + j];
                c[i * n + j] = s;
            }
        double trace = 0;
        for (int i = 0; i < n; i++)
            trace += c[i * n + i];
        return trace;
    }

    static int mixChar(int h, char c) { return h * 31 + Character.toLowerCase(c); }

    static int hashText(char[] text, int from, int len) {
        int h = 7;
        for (int i = 0; i < len; i++)
            h = mixChar(h, text[(from + i) % text.length]);
        return h;
    }

    static long work(int rounds, int seed) {
        boolean[] composite = new boolean[200_000];
        int n = 64;
        double[] a = new double[n * n], b = new double[n * n], c = new double[n * n];
        for (int i = 0; i < n * n; i++) {
            a[i] = (i * 7 + seed) % 13 / 13.0;
            b[i] = (i * 11 + seed) % 17 / 17.0;
        }
        char[] text = "The Quick Brown Fox Jumps Over The Lazy Dog, Again And Again".toCharArray();
        long sum = seed;
        for (int r = 0; r < rounds; r++) {
            sum = sum * 31 + fib(24 + r % 3);
            sum = sum * 31 + sieve(150_000 + r % 1000, composite);
            sum = sum * 31 + (long) (matmul(a, b, c, n) * 1000);
            for (int k = 0; k < 200; k++)
                sum = sum * 31 + hashText(text, r + k, 200);
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        long[] sums = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts[t] = new Thread(() -> sums[id] = work(rounds, id), "cpu-" + t);
            ts[t].start();
        }
        long checksum = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            checksum = checksum * 1_000_003L + sums[t];
        }
        System.out.println("result: threads=" + threads + " rounds=" + rounds + " checksum=" + Long.toHexString(checksum));
    }
}
