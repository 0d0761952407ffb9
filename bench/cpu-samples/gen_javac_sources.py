#!/usr/bin/env python3
"""Writes N generated Java classes (generics, lambdas, streams, switches) into DIR/p/, the javac
workload of the cpu=samples overhead runs. Usage: gen_javac_sources.py DIR [N=40]"""
import os
import random
import sys

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
random.seed(7)
os.makedirs(os.path.join(out, "p"), exist_ok=True)
for i in range(n):
    deps = [random.randrange(n) for _ in range(3)]
    lines = ["package p;", "import java.util.*;", "import java.util.function.*;",
             "import java.util.stream.*;",
             f"public class C{i}<T extends Comparable<T>> implements Comparable<C{i}<T>> {{",
             "  private final Map<String, List<T>> data = new HashMap<>();",
             "  private int counter;",
             f"  public int compareTo(C{i}<T> o) {{ return Integer.compare(counter, o.counter); }}"]
    for m in range(12):
        d = deps[m % 3]
        lines += [f"  public <R> List<R> m{m}(Function<? super T, ? extends R> f, List<T> in) {{",
                  "    List<R> out = new ArrayList<>();",
                  "    for (T t : in) { if (t != null) out.add(f.apply(t)); }",
                  f"    String s = \"m{m}\" + counter + in.size();",
                  "    switch (s.length() % 4) { case 0: counter++; break; case 1: counter += 2; break; default: counter--; }",
                  f"    Optional<String> o = in.stream().map(Object::toString).filter(x -> x.length() > {m}).findFirst();",
                  "    data.computeIfAbsent(s, k -> new ArrayList<>()).addAll(in);",
                  f"    if (o.isPresent()) {{ new C{d}<String>().m{(m + 1) % 12}(x -> x.length(), List.of(o.get())); }}",
                  "    return out.stream().sorted((a, b) -> Objects.hashCode(a) - Objects.hashCode(b)).collect(Collectors.toList());",
                  "  }"]
    lines.append("}")
    with open(os.path.join(out, "p", f"C{i}.java"), "w") as f:
        f.write("\n".join(lines) + "\n")
