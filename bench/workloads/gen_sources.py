#!/usr/bin/env python3
"""Writes a deterministic corpus of Java sources for javac to compile (the cpu=times benchmark
and test): N classes in a few packages that use each other, each with fields, constructors,
generics, lambdas and method references, nested and anonymous classes, switches, loops, string building,
exceptions and records, so the compiler runs every phase on varied code. Compiles with
--release 17 on JDK 17 and later.

usage: gen_sources.py <out-dir> <number-of-classes>
"""
import os
import random
import sys

PACKAGES = ['corpus.model', 'corpus.util', 'corpus.service', 'corpus.io']


def cls_name(i):
    return 'C%03d' % i


def pkg_of(i):
    return PACKAGES[i % len(PACKAGES)]


def method(rng, i, m, n):
    other = rng.randrange(n)
    kind = m % 8
    if kind == 0:
        return f'''
    public int sum{m}(java.util.List<Integer> xs) {{
        int s = 0;
        for (int x : xs) {{
            if (x % 3 == 0) continue;
            s += x * {rng.randrange(2, 9)};
        }}
        return s + count;
    }}'''
    if kind == 1:
        return f'''
    public String describe{m}(int k) {{
        StringBuilder b = new StringBuilder("{cls_name(i)}:");
        switch (k % 4) {{
            case 0: b.append("zero"); break;
            case 1: b.append("one").append(k); break;
            case 2: b.append(name.toUpperCase()); break;
            default: b.append(String.valueOf(k * {rng.randrange(3, 17)}));
        }}
        return b.toString();
    }}'''
    if kind == 2:
        return f'''
    public java.util.Map<String, Integer> group{m}(java.util.List<String> words) {{
        java.util.Map<String, Integer> m = new java.util.TreeMap<>();
        for (String w : words) {{
            if (w.isEmpty())
                continue;
            m.merge(w.substring(0, 1), w.length(), Integer::sum);
        }}
        return m;
    }}'''
    if kind == 3:
        return f'''
    public {pkg_of(other)}.{cls_name(other)} link{m}() {{
        return new {pkg_of(other)}.{cls_name(other)}(name + "{m}", count + {m});
    }}'''
    if kind == 4:
        return f'''
    public long parse{m}(String s) throws java.io.IOException {{
        try {{
            return Long.parseLong(s.trim()) << {rng.randrange(1, 5)};
        }} catch (NumberFormatException e) {{
            throw new java.io.IOException("bad number " + s, e);
        }} finally {{
            count++;
        }}
    }}'''
    if kind == 5:
        return f'''
    public <T extends Comparable<T>> T max{m}(java.util.Collection<? extends T> xs, T dflt) {{
        T best = dflt;
        for (T x : xs)
            if (best == null || x.compareTo(best) > 0)
                best = x;
        return best;
    }}'''
    if kind == 6:
        return f'''
    public Runnable task{m}(int[] data) {{
        return new Runnable() {{
            int calls;
            @Override
            public void run() {{
                calls++;
                java.util.Arrays.sort(data);
                for (int j = 0; j + 1 < data.length; j++)
                    data[j] ^= data[j + 1] >>> {rng.randrange(1, 7)};
            }}
        }};
    }}'''
    return f'''
    public double stats{m}(double... xs) {{
        double sum = 0, sq = 0;
        for (double x : xs) {{
            sum += x;
            sq += x * x;
        }}
        int n = Math.max(1, xs.length);
        java.util.List<{cls_name(i)}> sorted = new java.util.ArrayList<>();
        sorted.sort(java.util.Comparator.comparing({cls_name(i)}::name));
        return sq / n - (sum / n) * (sum / n);
    }}'''


def source(rng, i, n):
    methods = ''.join(method(rng, i, m, n) for m in range(rng.randrange(8, 14)))
    return f'''package {pkg_of(i)};

/** Generated for the cpu=times benchmark: class {i} of {n}. */
public class {cls_name(i)} implements Comparable<{cls_name(i)}> {{
    public record Pair(String key, int value) {{
        public Pair {{
            if (key == null) throw new IllegalArgumentException("key");
        }}
    }}

    public enum Mode {{ FAST, SLOW, OFF; Mode next() {{ return values()[(ordinal() + 1) % 3]; }} }}

    private final String name;
    private int count;
    private final java.util.List<Pair> pairs = new java.util.ArrayList<>();

    public {cls_name(i)}(String name, int count) {{
        this.name = name;
        this.count = count;
    }}

    public String name() {{ return name; }}

    public int count() {{ return count; }}

    public void add(String k, int v) {{ pairs.add(new Pair(k, v)); }}

    @Override
    public int compareTo({cls_name(i)} o) {{
        int c = Integer.compare(count, o.count);
        return c != 0 ? c : name.compareTo(o.name);
    }}
{methods}
}}
'''


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(20260101)
    for i in range(n):
        d = os.path.join(out, *pkg_of(i).split('.'))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, cls_name(i) + '.java'), 'w') as f:
            f.write(source(rng, i, n))


if __name__ == '__main__':
    main()
