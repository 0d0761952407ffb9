/* The template of every generated class: Soak copies its class file and replaces ZZZZZZZZ
 * (class name, method names, source file) with a new 8-digit hex number, so each copy is a
 * class with 8 methods of names no other class has. The methods call each other (stacks of
 * up to 9 frames inside the class), allocate, branch on their argument and take shared locks. */
public class SoakT_ZZZZZZZZ implements Runnable {
    private int calls;

    public void run() {
        calls++;
        SoakShared.sink += mA_ZZZZZZZZ(calls) + mE_ZZZZZZZZ(calls >> 1);
    }

    int mA_ZZZZZZZZ(int x) {
        int[] a = new int[4 + (x & 7)];
        if ((x & 1) == 0)
            return a.length + mB_ZZZZZZZZ(x >> 1);
        return a.length + mC_ZZZZZZZZ(x);
    }

    int mB_ZZZZZZZZ(int x) {
        StringBuilder b = new StringBuilder();
        b.append(x);
        return b.length() + mC_ZZZZZZZZ(x + 1);
    }

    int mC_ZZZZZZZZ(int x) {
        synchronized (SoakShared.LOCKS[x & 3]) {
            SoakShared.sink += x;
        }
        return (x % 3 == 0) ? mD_ZZZZZZZZ(x) : 1;
    }

    int mD_ZZZZZZZZ(int x) {
        long[] l = new long[2 + (x & 3)];
        SoakShared.keep(l);
        return (int) l.length + mF_ZZZZZZZZ(x);
    }

    int mE_ZZZZZZZZ(int x) {
        Object o = (x & 2) == 0 ? new Object() : new Integer[3];
        SoakShared.keep(o);
        return mF_ZZZZZZZZ(x ^ 5);
    }

    int mF_ZZZZZZZZ(int x) {
        synchronized (SoakShared.LOCKS[(x >> 2) & 3]) {
            SoakShared.sink ^= x;
        }
        return (x & 4) == 0 ? mG_ZZZZZZZZ(x) : mH_ZZZZZZZZ(x);
    }

    int mG_ZZZZZZZZ(int x) {
        char[] c = new char[8];
        c[x & 7] = 'x';
        return c.length;
    }

    int mH_ZZZZZZZZ(int x) {
        String s = "v" + (x & 15);
        return s.length();
    }
}
