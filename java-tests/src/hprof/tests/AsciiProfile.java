package hprof.tests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An hprof ascii profile (format=a), read strictly: its THREAD START names, its TRACEs (each
 * written once), and its "NAME BEGIN ... NAME END" sections. The ranked sections (SITES,
 * CPU SAMPLES, CPU TIME (ms), CPU TIME BY METHOD (ms), MONITOR TIME) must have their exact
 * column headers and then only rows ranked 1, 2, 3, ...; the others (MONITOR DUMP, HEAP DUMP)
 * keep their lines as written. The one reader of the ascii format for every test class.
 */
public final class AsciiProfile {
    /** A trace: thread serial (0 unless thread=y), frames as written ("Class.method(File:line)",
     *  "<empty>" left out), and the line it was written on (from 0). */
    public record Trace(int serial, int thread, List<String> frames, int line) {
        /** The frames as "Class.method", without their location. */
        public List<String> methods() {
            return frames.stream().map(f -> f.indexOf('(') < 0 ? f : f.substring(0, f.indexOf('('))).toList();
        }
    }

    /** One ranked row: self and accum percentages, the integer columns after them (counts,
     *  bytes, trace, ...), and the rest of the line (a method, a class or a monitor). */
    public record Row(int rank, double self, double accum, long[] numbers, String rest) {
        public long number(int i) {
            return numbers[i];
        }
    }

    /** One section: the BEGIN line and its "(total = N" (-1 if none), the rows of a ranked
     *  section, the lines between the header and END, the whole text, and its first line. */
    public record Section(String name, String begin, long total, List<Row> rows, List<String> body, String text,
                          int line) {}

    /** The column headers of the ranked sections, exactly as the writer prints them. */
    private static final Map<String, List<String>> RANKED = Map.of(
            "SITES", List.of("          percent          live          alloc'ed  stack class",
                    " rank   self  accum     bytes objs     bytes  objs trace name"),
            "CPU SAMPLES", List.of("rank   self  accum   count trace method"),
            "WALL SAMPLES", List.of("rank   self  accum   count trace method"),
            "CPU TIME (ms)", List.of("rank   self  accum   count trace method"),
            "CPU TIME BY METHOD (ms)", List.of("rank   self  accum   count  self_ms total_ms method signature"),
            "MONITOR TIME", List.of("rank   self  accum   count trace monitor"));

    private static final Pattern THREAD = Pattern.compile("THREAD START \\(obj=[0-9a-f]+, id = (\\d+), name=\"([^\"]*)\".*");
    private static final Pattern TRACE = Pattern.compile("TRACE (\\d+):(?: \\(thread=(\\d+)\\))?");
    private static final Pattern BEGIN = Pattern.compile("([A-Z][A-Z ()a-z]*?) BEGIN(?: .*)?");
    private static final Pattern TOTAL = Pattern.compile("\\(total = (\\d+)");
    private static final Pattern ROW = Pattern.compile(" *(\\d+) +(\\d+\\.\\d\\d)% +(\\d+\\.\\d\\d)%((?: +\\d+)+) (\\D.*)");

    public final String text;
    public final List<String> lines;
    /** Thread serial -> name, from THREAD START. */
    public final Map<Integer, String> threadNames = new HashMap<>();
    public final Map<Integer, Trace> traces = new HashMap<>();
    public final List<Section> sections = new ArrayList<>();

    private AsciiProfile(String text) {
        this.text = text;
        this.lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            Matcher m;
            if ((m = THREAD.matcher(l)).matches()) {
                threadNames.put(Integer.parseInt(m.group(1)), m.group(2));
            } else if ((m = TRACE.matcher(l)).matches()) {
                int serial = Integer.parseInt(m.group(1)), at = i;
                List<String> frames = new ArrayList<>();
                while (i + 1 < lines.size() && lines.get(i + 1).startsWith("\t")) {
                    String f = lines.get(++i).substring(1);
                    if (!f.equals("<empty>"))
                        frames.add(f);
                }
                Trace t = new Trace(serial, m.group(2) == null ? 0 : Integer.parseInt(m.group(2)), frames, at);
                if (traces.put(serial, t) != null)
                    throw new AssertionError("TRACE " + serial + " written twice");
            } else if ((m = BEGIN.matcher(l)).matches()) {
                i = readSection(m.group(1), i);
            }
        }
    }

    /** Reads the section whose BEGIN is line at; returns the line of its END. */
    private int readSection(String name, int at) {
        int end = -1;
        for (int i = at + 1; i < lines.size() && end < 0; i++)
            if (lines.get(i).equals(name + " END"))
                end = i;
        if (end < 0)
            throw new AssertionError(name + " BEGIN at line " + (at + 1) + " has no END\n" + text);
        Matcher total = TOTAL.matcher(lines.get(at));
        List<String> body = lines.subList(at + 1, end);
        List<Row> rows = new ArrayList<>();
        List<String> header = RANKED.get(name);
        if (header != null) {
            if (body.size() < header.size() || !body.subList(0, header.size()).equals(header))
                throw new AssertionError(name + " header lines differ: " + String.join("|", body));
            body = body.subList(header.size(), body.size());
            for (String l : body) {
                Matcher m = ROW.matcher(l);
                if (!m.matches())
                    throw new AssertionError("not a " + name + " row: '" + l + "'");
                if (Integer.parseInt(m.group(1)) != rows.size() + 1)
                    throw new AssertionError("rank out of order in " + name + ": " + l);
                long[] numbers = java.util.Arrays.stream(m.group(4).trim().split(" +")).mapToLong(Long::parseLong)
                        .toArray();
                rows.add(new Row(rows.size() + 1, Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)),
                        numbers, m.group(5)));
            }
        }
        sections.add(new Section(name, lines.get(at), total.find() ? Long.parseLong(total.group(1)) : -1, rows,
                body, String.join("\n", lines.subList(at, end + 1)) + "\n", at));
        return end;
    }

    public static AsciiProfile read(Path file) throws IOException {
        return new AsciiProfile(Files.readString(file));
    }

    public static AsciiProfile parse(String text) {
        return new AsciiProfile(text);
    }

    /** Every section of that name, in file order. */
    public List<Section> sections(String name) {
        return sections.stream().filter(s -> s.name().equals(name)).toList();
    }

    /** The which-th (from 0) section of that name; fails if there are not that many. */
    public Section section(String name, int which) {
        List<Section> all = sections(name);
        if (all.size() <= which)
            throw new AssertionError("no " + name + " section " + which + "\n" + text);
        return all.get(which);
    }

    public Trace trace(int serial) {
        Trace t = traces.get(serial);
        if (t == null)
            throw new AssertionError("TRACE " + serial + " not written\n" + text);
        return t;
    }

    /** The name of the thread of a trace (thread=y), or null. */
    public String threadOf(int trace) {
        Trace t = traces.get(trace);
        return t == null ? null : threadNames.get(t.thread());
    }

    public int threadId(String name) {
        return threadNames.entrySet().stream().filter(e -> e.getValue().equals(name)).map(Map.Entry::getKey)
                .findFirst().orElseThrow(() -> new AssertionError("no THREAD START for " + name + "\n" + text));
    }

    /** The lines that contain word, joined. */
    public String grep(String word) {
        return String.join("\n", lines.stream().filter(l -> l.contains(word)).toList());
    }
}
