package hprof.tests;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The SITES dumps of one hprof output, ascii or binary, with the traces they name. The binary
 * reader is strict about what heap=sites promises: every record a site or trace names (STRING,
 * LOAD CLASS, STACK FRAME, STACK TRACE) comes before it.
 */
public final class SitesReport {
    /** One row: class (Java source name), trace serial, counts. */
    public record Site(String cls, int arrayType, int trace, long liveBytes, long liveObjs,
                       long allocBytes, long allocObjs) {}

    /** A trace: thread serial (0 unless thread=y) and frames as "Class.method". */
    public record Trace(int serial, int thread, List<String> methods, List<String> lines) {}

    /** One SITES block (ascii) or ALLOC SITES record (binary), with its totals. */
    public record Dump(List<Site> sites, long totalLiveBytes, long totalLiveObjs,
                       long totalAllocBytes, long totalAllocObjs) {}

    public final List<Dump> dumps = new ArrayList<>();
    public final Map<Integer, Trace> traces = new HashMap<>();
    /** Binary only: HEAP SUMMARY records (live bytes, live objs, alloc bytes, alloc objs). */
    public final List<long[]> summaries = new ArrayList<>();
    /** Thread serial -> name, from THREAD START. */
    public final Map<Integer, String> threadNames = new HashMap<>();

    public Dump last() {
        if (dumps.isEmpty())
            throw new AssertionError("no SITES dump in the output");
        return dumps.get(dumps.size() - 1);
    }

    public Trace trace(Site s) {
        Trace t = traces.get(s.trace());
        if (t == null)
            throw new AssertionError("site names trace " + s.trace() + " which was not written");
        return t;
    }

    /** The rows of class cls whose trace has a frame of method ("Class.method"). */
    public List<Site> rows(Dump d, String cls, String method) {
        return d.sites()
            .stream()
            .filter(s -> s.cls().equals(cls))
            .filter(s -> method == null || trace(s).methods().contains(method))
            .toList();
    }

    /** The rows of class cls whose top frame is method. */
    public List<Site> rowsAtTop(Dump d, String cls, String method) {
        return d.sites()
            .stream()
            .filter(s -> s.cls().equals(cls))
            .filter(s -> !trace(s).methods().isEmpty() && trace(s).methods().get(0).equals(method))
            .toList();
    }

    public static long sum(List<Site> rows, java.util.function.ToLongFunction<Site> f) {
        return rows.stream().mapToLong(f).sum();
    }

    // ---- ascii ---------------------------------------------------------------------------

    /** The SITES sections of an ascii profile, read by AsciiProfile (exact headers, ranks in order). */
    public static SitesReport ascii(Path file) throws IOException {
        SitesReport r = new SitesReport();
        AsciiProfile a = AsciiProfile.read(file);
        r.threadNames.putAll(a.threadNames);
        a.traces.forEach((serial, t) -> r.traces.put(serial, new Trace(serial, t.thread(), t.methods(), t.frames())));
        for (AsciiProfile.Section section : a.sections("SITES")) {
            List<Site> sites = new ArrayList<>();
            for (AsciiProfile.Row row : section.rows()) {
                if (row.numbers().length != 5)
                    throw new AssertionError("not a SITES row: " + row);
                int trace = (int) row.number(4);
                if (!a.traces.containsKey(trace) || a.traces.get(trace).line() > section.line())
                    throw new AssertionError("row names TRACE " + trace + " not written before it");
                sites.add(new Site(row.rest(), 0, trace, row.number(0), row.number(1), row.number(2), row.number(3)));
            }
            r.dumps.add(new Dump(sites, -1, -1, -1, -1));
        }
        return r;
    }

    // ---- binary --------------------------------------------------------------------------

    public static SitesReport binary(Path file) throws IOException {
        SitesReport r = new SitesReport();
        Map<Long, String> strings = new HashMap<>();
        Map<Integer, String> classes = new HashMap<>();
        Map<Long, String> frames = new HashMap<>();
        Set<Integer> threads = new HashSet<>();
        try (DataInputStream in =
                 new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(file)))) {
            byte[] magic = new byte[19];
            in.readFully(magic);
            if (!new String(magic, StandardCharsets.US_ASCII).equals("JAVA PROFILE 1.0.2\0"))
                throw new AssertionError("bad header");
            if (in.readInt() != 8)
                throw new AssertionError("identifier size must be 8");
            in.readLong();
            while (true) {
                int tag;
                try {
                    tag = in.readUnsignedByte();
                } catch (EOFException e) {
                    break;
                }
                in.readInt();
                long len = Integer.toUnsignedLong(in.readInt());
                switch (tag) {
                case 0x01 -> {
                    long id = in.readLong();
                    byte[] b = new byte[(int) len - 8];
                    in.readFully(b);
                    strings.put(id, new String(b, StandardCharsets.UTF_8));
                }
                case 0x02 -> {
                    int serial = in.readInt();
                    in.readLong();
                    in.readInt();
                    long name = in.readLong();
                    classes.put(serial, need(strings, name, "LOAD CLASS name"));
                }
                case 0x04 -> {
                    long id = in.readLong();
                    long method = in.readLong();
                    long sig = in.readLong();
                    long source = in.readLong();
                    int cls = in.readInt();
                    in.readInt();
                    need(strings, sig, "frame signature");
                    if (source != 0)
                        need(strings, source, "frame source");
                    String c = classes.get(cls);
                    if (c == null)
                        throw new AssertionError("STACK FRAME names class serial " + cls + " before its LOAD CLASS");
                    frames.put(id, c + "." + need(strings, method, "frame method"));
                }
                case 0x05 -> {
                    int serial = in.readInt();
                    int thread = in.readInt();
                    int n = in.readInt();
                    List<String> methods = new ArrayList<>();
                    for (int k = 0; k < n; k++) {
                        long f = in.readLong();
                        String m = frames.get(f);
                        if (m == null)
                            throw new AssertionError("STACK TRACE " + serial + " names frame " + f + " not written before");
                        methods.add(m);
                    }
                    if (r.traces.put(serial, new Trace(serial, thread, methods, methods)) != null)
                        throw new AssertionError("STACK TRACE " + serial + " written twice");
                }
                case 0x06 -> {
                    in.readUnsignedShort();
                    in.readInt();
                    long liveBytes = Integer.toUnsignedLong(in.readInt());
                    long liveObjs = Integer.toUnsignedLong(in.readInt());
                    long allocBytes = in.readLong();
                    long allocObjs = in.readLong();
                    int n = in.readInt();
                    if (len != 34 + 25L * n)
                        throw new AssertionError("ALLOC SITES length " + len + " for " + n + " sites");
                    List<Site> sites = new ArrayList<>();
                    for (int k = 0; k < n; k++) {
                        int arrayType = in.readUnsignedByte();
                        int cls = in.readInt();
                        int trace = in.readInt();
                        String c = classes.get(cls);
                        if (c == null)
                            throw new AssertionError("ALLOC SITES names class serial " + cls + " with no LOAD CLASS before");
                        if (!r.traces.containsKey(trace))
                            throw new AssertionError("ALLOC SITES names trace " + trace + " with no STACK TRACE before");
                        sites.add(new Site(c, arrayType, trace, Integer.toUnsignedLong(in.readInt()),
                                Integer.toUnsignedLong(in.readInt()), Integer.toUnsignedLong(in.readInt()),
                                Integer.toUnsignedLong(in.readInt())));
                    }
                    r.dumps.add(new Dump(sites, liveBytes, liveObjs, allocBytes, allocObjs));
                }
                case 0x07 -> r.summaries.add(new long[] {Integer.toUnsignedLong(in.readInt()),
                        Integer.toUnsignedLong(in.readInt()), in.readLong(), in.readLong()});
                case 0x0A -> {
                    int serial = in.readInt();
                    in.readLong();
                    in.readInt();
                    long name = in.readLong();
                    in.readLong();
                    in.readLong();
                    threads.add(serial);
                    r.threadNames.put(serial, need(strings, name, "thread name"));
                }
                default -> in.skipNBytes(len);
                }
            }
        }
        return r;
    }

    private static String need(Map<Long, String> strings, long id, String what) {
        String s = strings.get(id);
        if (s == null)
            throw new AssertionError(what + " names string " + id + " not written before");
        return s;
    }

    /** For messages. */
    public String describe(Dump d, Predicate<Site> which) {
        StringBuilder b = new StringBuilder();
        for (Site s : d.sites())
            if (which.test(s))
                b.append(s).append(" ").append(trace(s).methods()).append('\n');
                    return b.toString();
                }
            }
