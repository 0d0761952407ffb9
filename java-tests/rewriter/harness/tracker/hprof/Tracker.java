// A checking stand-in for the real hprof/Tracker (rewriter/tracker): instead of calling the
// agent it keeps a shadow stack per thread and records every exit that does not match the
// innermost open entry. Only the fixtures are rewritten in these tests, so the JDK classes this
// class uses never call back into it.
package hprof;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

public final class Tracker {
    private Tracker() {
    }

    public static final AtomicLong entries = new AtomicLong();
    public static final AtomicLong exits = new AtomicLong();
    /** Exits with no open entry at all, or naming a method not on the thread's stack. */
    public static final List<String> bad = Collections.synchronizedList(new ArrayList<>());
    /** Frames popped without their own exit because an exit for a frame below them came first. */
    public static final List<String> unwound = Collections.synchronizedList(new ArrayList<>());
    /** cnum << 32 | mnum -> "Class.method(desc)", filled by the harness from the rewrite map. */
    public static final Map<Long, String> names = new ConcurrentHashMap<>();

    private static final List<ArrayDeque<Long>> stacks = Collections.synchronizedList(new ArrayList<>());
    private static final ThreadLocal<ArrayDeque<Long>> stack = ThreadLocal.withInitial(() -> {
        ArrayDeque<Long> s = new ArrayDeque<>();
        stacks.add(s);
        return s;
    });

    private static long key(int cnum, int mnum) {
        return ((long) cnum << 32) | (mnum & 0xffffffffL);
    }

    public static String name(long k) {
        String n = names.get(k);
        return n != null ? n : ("#" + (k >>> 32) + "/" + (k & 0xffffffffL));
    }

    public static void methodEntry(int cnum, int mnum) {
        entries.incrementAndGet();
        stack.get().push(key(cnum, mnum));
    }

    public static void methodExit(int cnum, int mnum) {
        exits.incrementAndGet();
        ArrayDeque<Long> s = stack.get();
        long k = key(cnum, mnum);
        if (!s.isEmpty() && s.peek() == k) {
            s.pop();
            return;
        }
        if (!s.contains(k)) {
            bad.add("exit of " + name(k) + " with " + (s.isEmpty() ? "nothing" : name(s.peek())) + " on top");
            return;
        }
        while (s.peek() != k)
            unwound.add(name(s.pop()) + " (below it: " + name(k) + ")");
        s.pop();
    }

    /** Frames still open on any thread that has used the tracker. */
    public static List<String> open() {
        List<String> l = new ArrayList<>();
        synchronized (stacks) {
            for (ArrayDeque<Long> s : stacks)
                for (long k : s)
                    l.add(name(k));
        }
        return l;
    }

    public static void reset() {
        entries.set(0);
        exits.set(0);
        bad.clear();
        unwound.clear();
        synchronized (stacks) {
            for (ArrayDeque<Long> s : stacks)
                s.clear();
        }
    }
}
