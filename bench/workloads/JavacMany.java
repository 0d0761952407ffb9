/* Benchmark workload: javac, in-process through javax.tools, compiling a few hundred generated
 * source files (so the JVM flags and the agent apply to the compiler itself).
 *
 *   java JavacMany <files> <work dir>
 *
 * Writes <files> Java sources under <work dir>/src, deterministically (the text depends only on
 * <files>), in packages of 50; each class refers to earlier ones, uses generics, records,
 * enums, lambdas, streams, switch expressions, nested classes and string concatenation, so
 * every phase of the compiler has work. Compiles them all in one task with --release 17 -g
 * into <work dir>/classes, then deletes <work dir>. Prints one line
 *   result: files=<n> classes=<class files> bytes=<total class file bytes>
 * which is the same in every run on one JDK. */
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class JavacMany {
    static String pkg(int i) { return "gen.p" + (i / 50); }

    static String name(int i) { return "C" + i; }

    static String qualified(int i) { return pkg(i) + "." + name(i); }

    static String source(int i) {
        String n = name(i);
        int prev = i > 0 ? i - 1 : -1, half = i > 1 ? i / 2 : -1;
        StringBuilder s = new StringBuilder(8192);
        s.append("package ").append(pkg(i)).append(";\n\n");
        s.append("import java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n\n");
        s.append("/** Generated class number ").append(i).append(". */\n");
        s.append("public final class ").append(n).append(" implements Comparable<").append(n).append("> {\n");
        s.append("    public enum Kind { ALPHA, BETA, GAMMA, DELTA").append(i % 3 == 0 ? ", EPSILON" : "")
            .append(";\n        public int weight() { return switch (this) { case ALPHA -> 1; case BETA -> 2;")
            .append(" case GAMMA -> 3; default -> ").append(4 + i % 5).append("; }; }\n    }\n\n");
        s.append("    public record Item(String label, long value, Kind kind) {\n")
            .append("        public Item { Objects.requireNonNull(label); }\n")
            .append("        public Item scaled(long f) { return new Item(label + \"*\" + f, value * f, kind); }\n")
            .append("    }\n\n");
        s.append("    public static final int ID = ").append(i).append(";\n");
        s.append("    private final List<Item> items = new ArrayList<>();\n");
        s.append("    private final Map<Kind, Long> totals = new EnumMap<>(Kind.class);\n");
        s.append("    private long seed;\n\n");
        s.append("    public ").append(n).append("(long seed) {\n        this.seed = seed;\n")
            .append("        for (int k = 0; k < ").append(3 + i % 7).append("; k++)\n")
            .append("            add(\"item\" + k + \"-\" + ID, next() % 1000, Kind.values()[k % Kind.values().length]);\n")
            .append("    }\n\n");
        s.append("    private long next() { seed = seed * 6364136223846793005L + 1442695040888963407L; return seed >>> 33; }\n\n");
        s.append("    public ").append(n).append(" add(String label, long value, Kind kind) {\n")
            .append("        Item it = new Item(label, value, kind);\n        items.add(it);\n")
            .append("        totals.merge(kind, value * kind.weight(), Long::sum);\n        return this;\n    }\n\n");
        s.append("    public long total() { return totals.values().stream().mapToLong(Long::longValue).sum(); }\n\n");
        s.append("    public <T extends Comparable<? super T>> Optional<T> best(Function<Item, T> key) {\n")
            .append("        return items.stream().map(key).max(Comparator.naturalOrder());\n    }\n\n");
        s.append("    public Map<Kind, List<String>> labelsByKind() {\n")
            .append("        return items.stream().collect(Collectors.groupingBy(Item::kind, () -> new EnumMap<>(Kind.class),\n")
            .append("            Collectors.mapping(Item::label, Collectors.toList())));\n    }\n\n");
        s.append("    public String describe(Object o) {\n")
            .append("        if (o instanceof Item it && it.value() > ").append(i % 100).append(")\n")
            .append("            return \"big \" + it.label() + \" of \" + it.kind() + \" in ").append(n).append("\";\n")
            .append("        if (o instanceof CharSequence cs)\n            return \"text(\" + cs.length() + \")\";\n")
            .append("        return String.valueOf(o);\n    }\n\n");
        s.append("    public int classify(int x) {\n        switch (x % 6) {\n");
        for (int c = 0; c < 5; c++)
            s.append("        case ").append(c).append(": return x * ").append(c + i % 11).append(" + ").append(c).append(";\n");
        s.append("        default: return -x;\n        }\n    }\n\n");
        s.append("    static final class Node<K extends Comparable<K>, V> {\n")
            .append("        final K key; V value; Node<K, V> left, right;\n")
            .append("        Node(K key, V value) { this.key = key; this.value = value; }\n")
            .append("        Node<K, V> put(K k, V v) {\n            int c = k.compareTo(key);\n")
            .append("            if (c == 0) value = v;\n")
            .append("            else if (c < 0) left = left == null ? new Node<>(k, v) : left.put(k, v);\n")
            .append("            else right = right == null ? new Node<>(k, v) : right.put(k, v);\n")
            .append("            return this;\n        }\n")
            .append("        int size() { return 1 + (left == null ? 0 : left.size()) + (right == null ? 0 : right.size()); }\n")
            .append("    }\n\n");
        s.append("    public int tree(int n) {\n        Node<Integer, String> root = new Node<>(0, \"root\");\n")
            .append("        for (int k = 1; k < n; k++)\n            root.put((int) (next() % 1000), \"v\" + k);\n")
            .append("        return root.size();\n    }\n\n");
        s.append("    public long chain() {\n        long acc = total();\n");
        if (prev >= 0)
            s.append("        acc += new ").append(qualified(prev)).append("(seed + 1).total();\n");
        if (half >= 0)
            s.append("        acc ^= ").append(qualified(half)).append(".ID * 31L;\n");
        s.append("        Supplier<String> label = () -> \"chain-\" + ID + \"-\" + items.size();\n")
            .append("        BiFunction<Long, Integer, Long> f = (a, b) -> a * 31 + b;\n")
            .append("        return f.apply(acc, label.get().length());\n    }\n\n");
        s.append("    public static int sum(int... xs) {\n        int t = 0;\n        for (int x : xs)\n")
            .append("            t += x;\n        return t;\n    }\n\n");
        s.append("    public String report() {\n        StringBuilder sb = new StringBuilder();\n")
            .append("        for (Item it : items) {\n            try {\n")
            .append("                sb.append(it.label()).append('=').append(Math.addExact(it.value(), ID)).append(';');\n")
            .append("            } catch (ArithmeticException e) {\n                sb.append(\"overflow\");\n")
            .append("            }\n        }\n")
            .append("        return sb + \" total=\" + total() + \" classify=\" + classify(ID) + \" sum=\" + sum(1, 2, ID);\n")
            .append("    }\n\n");
        s.append("    @Override public int compareTo(").append(n).append(" o) { return Long.compare(total(), o.total()); }\n\n");
        s.append("    @Override public boolean equals(Object o) { return o instanceof ").append(n)
            .append(" c && c.total() == total(); }\n\n");
        s.append("    @Override public int hashCode() { return Long.hashCode(total()) * 31 + ID; }\n");
        s.append("}\n");
        return s.toString();
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root))
            return;
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    public static void main(String[] args) throws Exception {
        int files = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        Path work = Path.of(args.length > 1 ? args[1] : "javac-work");
        deleteTree(work);
        Path src = work.resolve("src"), classes = work.resolve("classes");
        Files.createDirectories(classes);
        List<Path> sources = new ArrayList<>();
        for (int i = 0; i < files; i++) {
            Path p = src.resolve(pkg(i).replace('.', '/')).resolve(name(i) + ".java");
            Files.createDirectories(p.getParent());
            Files.writeString(p, source(i), StandardCharsets.UTF_8);
            sources.add(p);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        boolean ok;
        try (StandardJavaFileManager fm = javac.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromPaths(sources);
            List<String> options = List.of("--release", "17", "-g", "-d", classes.toString(), "-sourcepath", src.toString());
            ok = javac.getTask(null, fm, diagnostics, options, null, units).call();
        }
        if (!ok) {
            diagnostics.getDiagnostics().stream().limit(10).forEach(d -> System.err.println(d));
            System.exit(1);
        }
        long count, bytes;
        try (Stream<Path> walk = Files.walk(classes)) {
            List<Path> out = walk.filter(p -> p.toString().endsWith(".class")).toList();
            count = out.size();
            long b = 0;
            for (Path p : out)
                b += Files.size(p);
            bytes = b;
        }
        deleteTree(work);
        System.out.println("result: files=" + files + " classes=" + count + " bytes=" + bytes);
    }
}
