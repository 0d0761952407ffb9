/* Writes a corpus of Java sources for the javac workload of bench/sites-overhead.sh: N classes
 * (default 300) with fields, generic collections, streams and lambdas, string switches,
 * records, enums, nested and anonymous classes, each using its two predecessors, so javac
 * parses, attributes, checks flow and generates code for every one. Arguments: dir [N]. */
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

public class GenSources {
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0], "gen");
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        Files.createDirectories(dir);
        for (int i = 0; i < n; i++)
            Files.writeString(dir.resolve("C" + i + ".java"), source(i));
    }

    static String source(int i) {
        String prev = i > 0 ? "C" + (i - 1) : null, prev2 = i > 1 ? "C" + (i - 2) : null;
        StringBuilder b = new StringBuilder();
        b.append("package gen;\n\nimport java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n\n");
        b.append("public class C").append(i).append(" implements Comparable<C").append(i).append("> {\n");
        b.append("    public enum Kind { ALPHA, BETA, GAMMA, DELTA_").append(i).append(" }\n");
        b.append("    public record Pair<A, B>(A first, B second) {\n");
        b.append("        public <C> Pair<A, C> withSecond(C c) { return new Pair<>(first, c); }\n    }\n");
        b.append("    private final Map<String, List<Integer>> index = new HashMap<>();\n");
        b.append("    private final List<Pair<String, Kind>> pairs = new ArrayList<>();\n");
        b.append("    private int counter;\n    private String name = \"c").append(i).append("\";\n\n");
        b.append("    public int compareTo(C").append(i).append(" o) { return Integer.compare(counter, o.counter); }\n\n");
        for (int m = 0; m < 6; m++) {
            if (m < 2) {
                b.append("    public List<String> names").append(m).append("(Collection<? extends CharSequence> in, int limit) {\n");
                b.append("        return in.stream().map(CharSequence::toString).filter(s -> s.length() > ").append(m)
                        .append(").map(s -> s + \"-").append(m).append("\")\n");
                b.append("                .sorted().limit(limit).collect(Collectors.toList());\n    }\n\n");
            }
            b.append("    public int compute").append(m).append("(int[] values, String mode) {\n");
            b.append("        int acc = ").append(m).append(";\n");
            b.append("        for (int k = 0; k < values.length; k++) {\n");
            b.append("            switch (mode) {\n");
            b.append("            case \"sum\": acc += values[k]; break;\n");
            b.append("            case \"xor\": acc ^= values[k] * ").append(i + 1).append("; break;\n");
            b.append("            case \"max\": acc = Math.max(acc, values[k]); break;\n");
            b.append("            default: acc = acc * 31 + (values[k] >>> ").append(m % 5 + 1).append(");\n");
            b.append("            }\n        }\n");
            b.append("        index.computeIfAbsent(mode + acc, x -> new ArrayList<>()).add(acc);\n");
            b.append("        return acc;\n    }\n\n");
        }
        b.append("    public Optional<Pair<String, Kind>> find(Predicate<Pair<String, Kind>> p) {\n");
        b.append("        for (Pair<String, Kind> pair : pairs)\n            if (p.test(pair))\n                return Optional.of(pair);\n");
        b.append("        return Optional.empty();\n    }\n\n");
        b.append("    public Runnable task(final int times) {\n        return new Runnable() {\n");
        b.append("            private int done;\n            @Override public void run() {\n");
        b.append("                while (done < times) { counter += done++; pairs.add(new Pair<>(name + done, Kind.values()[done % 4])); }\n");
        b.append("            }\n        };\n    }\n\n");
        b.append("    static String describe(Object o) {\n");
        b.append("        if (o instanceof String s && !s.isEmpty()) return \"string \" + s.charAt(0);\n");
        b.append("        if (o instanceof Integer n) return \"int \" + (n + ").append(i).append(");\n");
        b.append("        return String.valueOf(o);\n    }\n\n");
        b.append("    public long chain() {\n        long h = counter;\n");
        if (prev != null)
            b.append("        h += new ").append(prev).append("().compute0(new int[] {1, 2, 3}, \"sum\");\n");
        if (prev2 != null)
            b.append("        h ^= new ").append(prev2).append("().names1(List.of(\"a\", \"bb\", \"ccc\"), 2).size();\n");
        b.append("        Map<Kind, Integer> counts = new EnumMap<>(Kind.class);\n");
        b.append("        for (Pair<String, Kind> p : pairs) counts.merge(p.second(), 1, Integer::sum);\n");
        b.append("        for (Map.Entry<Kind, Integer> e : counts.entrySet()) h = h * 17 + e.getKey().ordinal() * e.getValue();\n");
        b.append("        return h + describe(h).length();\n    }\n}\n");
        return b.toString();
    }
}
