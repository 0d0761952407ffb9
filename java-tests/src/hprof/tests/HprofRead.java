package hprof.tests;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Runs tools/hprof-read (the strict reader) on a file and parses its --json summary. */
public final class HprofRead {
    private HprofRead() {}

    public record Report(int exit, String output, Map<String, Object> json) {
        /** How many records of a tag ("STRING IN UTF8", "START THREAD", ...) the file holds. */
        public long count(String tagName) {
            Object counts = json.get("record_counts");
            if (!(counts instanceof Map<?, ?> m) || !(m.get(tagName) instanceof Number n))
                throw new AssertionError("no record count for " + tagName + " in " + output);
            return n.longValue();
        }
        public Object get(String... path) {
            Object o = json;
            for (String k : path) {
                if (!(o instanceof Map<?, ?> m))
                    return null;
                o = m.get(k);
            }
            return o;
        }
    }

    public static Path tool() { return Path.of(Jvm.env("HPROF_READ")); }

    /** Reads file strictly; exit 0 means no violation. Extra flags go before the file. */
    public static Report check(Path file, String... flags) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(tool().toString());
        cmd.add("--json");
        cmd.addAll(List.of(flags));
        cmd.add(file.toString());
        Jvm.Result r = Jvm.exec(cmd, file.toAbsolutePath().getParent(), Map.of(), 600);
        Map<String, Object> json = Map.of();
        String text = r.out().trim();
        if (text.startsWith("{"))
            json = asMap(new Json(text).value());
        return new Report(r.exit(), r.out() + r.err(), json);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) { return (Map<String, Object>) o; }

    /** A small JSON parser: objects, arrays, strings, numbers, true/false/null. */
    static final class Json {
        private final String s;
        private int i;
        Json(String s) { this.s = s; }

        Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                skip();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    skip();
                    String k = string();
                    skip();
                    expect(':');
                    m.put(k, value());
                    skip();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                skip();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value());
                    skip();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(start, i);
            if (num.contains(".") || num.contains("e") || num.contains("E"))
                return Double.parseDouble(num);
            return Long.parseLong(num);
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> { b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; }
                    default -> b.append(e);
                }
            }
        }

        private void expect(char c) {
            if (s.charAt(i) != c)
                throw new IllegalArgumentException("expected " + c + " at " + i + " in " + s);
            i++;
        }

        private void skip() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
    }
}
