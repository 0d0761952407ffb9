/**
 * A fixed amount of work for hprof-diff's tests (tests/test_diff_runs.sh, bench/diff/): ROUNDS
 * rounds, each calling ten methods that do a given number of units of the same arithmetic (one
 * unit is 1000 xorshift steps), so that the CPU time of each method is proportional to its
 * units whatever the run's length or the machine's speed:
 *
 *   DiffFixedWork ROUNDS ALPHA GAMMA OTHERS
 *
 * alpha() does ALPHA units a round, gamma() GAMMA, and each of o1() ... o8() OTHERS. The tests'
 * base is 550 50 50 (alpha 55% of the CPU, gamma and each other method 5%); a changed build
 * gives alpha 25% more units (688), or gamma twice as many (100), or every method 15% more
 * (633 58 58: a machine that is uniformly slower).
 */
public class DiffFixedWork {
    static volatile long sink;

    static long spin(int units, long seed) {
        long x = seed | 1;
        for (int i = 0; i < units * 1000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long alpha(int units) { return spin(units, 17); }

    static long gamma(int units) { return spin(units, 19); }

    static long o1(int units) { return spin(units, 23); }

    static long o2(int units) { return spin(units, 29); }

    static long o3(int units) { return spin(units, 31); }

    static long o4(int units) { return spin(units, 37); }

    static long o5(int units) { return spin(units, 41); }

    static long o6(int units) { return spin(units, 43); }

    static long o7(int units) { return spin(units, 47); }

    static long o8(int units) { return spin(units, 53); }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        int a = Integer.parseInt(args[1]), g = Integer.parseInt(args[2]);
        int o = Integer.parseInt(args[3]);
        for (int r = 0; r < rounds; r++) {
            sink += alpha(a);
            sink += gamma(g);
            sink += o1(o) + o2(o) + o3(o) + o4(o) + o5(o) + o6(o) + o7(o) + o8(o);
        }
        System.out.println("rounds " + rounds);
    }
}
