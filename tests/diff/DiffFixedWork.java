/**
 * A fixed amount of work for hprof-diff's tests (tests/test_diff_runs.sh, bench/diff/): ROUNDS
 * rounds, each calling ten methods that do a given number of units of the same arithmetic (one
 * unit is 20000 xorshift steps, about 30 us), so that the CPU time of each method is
 * proportional to its units whatever the run's length or the machine's speed:
 *
 *   DiffFixedWork ROUNDS ALPHA GAMMA OTHERS
 *
 * alpha() does ALPHA units a round, gamma() GAMMA, and each of o1() ... o8() OTHERS. The tests'
 * base is 550 50 50 (alpha 55% of the CPU, gamma and each other method 5%); a changed build
 * gives alpha 25% more units (688), or gamma twice as many (100), or every method 15% more
 * (633 58 58: a machine that is uniformly slower).
 *
 * The methods run in a shuffled order each round (the same order in every run): a sampler
 * whose timer ticks at a steady period would otherwise meet the rounds, which also have a
 * steady period, at the same few places in them, and its samples would follow that beat, not
 * the time each method takes. And each call lasts at least a millisecond or so (50 units): on a
 * loaded machine the agent walks a thread's stack some 0.2 ms after its timer fired, so a
 * call much shorter than that would be credited with samples of the call before it.
 */
public class DiffFixedWork {
    static volatile long sink;

    static long spin(int units, long seed) {
        long x = seed | 1;
        for (int i = 0; i < units * 20000; i++) {
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

    static long call(int method, int a, int g, int o) {
        switch (method) {
        case 0: return alpha(a);
        case 1: return gamma(g);
        case 2: return o1(o);
        case 3: return o2(o);
        case 4: return o3(o);
        case 5: return o4(o);
        case 6: return o5(o);
        case 7: return o6(o);
        case 8: return o7(o);
        default: return o8(o);
        }
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        int a = Integer.parseInt(args[1]), g = Integer.parseInt(args[2]);
        int o = Integer.parseInt(args[3]);
        int[] order = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        java.util.Random random = new java.util.Random(42);
        for (int r = 0; r < rounds; r++) {
            for (int i = order.length - 1; i > 0; i--) {
                int j = random.nextInt(i + 1), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int m : order)
                sink += call(m, a, g, o);
        }
        System.out.println("rounds " + rounds);
    }
}
