package hprof.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * net=host:port: the agent streams to a peer and runs the commands the peer sends back
 * (doc/socket.md). The peer is written here (a ServerSocket that saves what it receives and
 * writes commands encoded independently of the C encoder), or is tools/hprof-listen.
 */
class NetTest {
    static final int FORCE_GC = 0x01, DUMP_HEAP = 0x02, ALLOC_SITES = 0x03, HEAP_SUMMARY = 0x04,
            EXIT_VM = 0x05, DUMP_TRACES = 0x06, CPU_SAMPLES = 0x07, CONTROL = 0x08;
    static final int TAG_STRING = 0x01, TAG_START_THREAD = 0x0A, TAG_CONTROL_SETTINGS = 0x0E;

    // ---- the peer --------------------------------------------------------------------

    /** One agent connection: accepted, optionally read to the end on a thread. */
    static final class Peer implements AutoCloseable {
        final ServerSocket server;
        Socket socket;
        private final ByteArrayOutputStream got = new ByteArrayOutputStream();
        private Thread reader;
        volatile IOException readError; // how the read ended, when not at the end of the stream

        Peer(InetAddress addr, int receiveBuffer) throws IOException {
            server = new ServerSocket();
            if (receiveBuffer > 0)
                server.setReceiveBufferSize(receiveBuffer);
            server.bind(new InetSocketAddress(addr, 0), 1);
            server.setSoTimeout(60_000);
        }

        static Peer loopback() throws IOException { return new Peer(InetAddress.getByName("127.0.0.1"), 0); }

        int port() { return server.getLocalPort(); }

        void accept(boolean read) throws IOException {
            socket = server.accept();
            if (read) {
                reader = new Thread(this::readAll, "peer-reader");
                reader.setDaemon(true);
                reader.start();
            }
        }

        private void readAll() {
            try (InputStream in = socket.getInputStream()) {
                byte[] b = new byte[65536];
                int n;
                while ((n = in.read(b)) > 0) {
                    synchronized (got) {
                        got.write(b, 0, n);
                    }
                }
            } catch (IOException e) {
                // closed by the test, or reset by the agent: what was read is kept
                readError = e;
            }
        }

        byte[] received() {
            synchronized (got) {
                return got.toByteArray();
            }
        }

        void send(byte[] b) throws IOException {
            socket.getOutputStream().write(b);
            socket.getOutputStream().flush();
        }

        /** Everything the agent sent, once it has closed the connection. */
        byte[] awaitEnd(long ms) throws InterruptedException {
            reader.join(ms);
            assertFalse(reader.isAlive(), "the agent did not close the connection within " + ms + " ms");
            return received();
        }

        @Override
        public void close() throws IOException {
            if (socket != null)
                socket.close();
            server.close();
        }
    }

    // ---- the profiled program --------------------------------------------------------

    /** java-tests/programs/NetTarget running with the agent, started without waiting for it. */
    static final class Target implements AutoCloseable {
        final Process process;
        final Path dir, out, err, stop;

        private Target(Process p, Path dir, Path out, Path err, Path stop) {
            this.process = p;
            this.dir = dir;
            this.out = out;
            this.err = err;
            this.stop = stop;
        }

        static Target start(Path jdk, Path dir, List<String> jvmArgs, String mode) throws IOException {
            return start(jdk, dir, jvmArgs, mode, Map.of());
        }

        static Target start(Path jdk, Path dir, List<String> jvmArgs, String mode, Map<String, String> env)
                throws IOException {
            List<String> cmd = new ArrayList<>();
            cmd.add(jdk.resolve("bin/java").toString());
            cmd.addAll(jvmArgs);
            cmd.addAll(List.of("-cp", Jvm.programs().toString(), "NetTarget",
                    dir.resolve("stop").toString(), mode));
            Path out = dir.resolve("target.out"), err = dir.resolve("target.err");
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().putAll(env);
            return new Target(pb.start(), dir, out, err, dir.resolve("stop"));
        }

        String out() throws IOException { return Files.readString(out); }
        String err() throws IOException { return Files.readString(err); }

        void awaitOut(String text) throws Exception {
            NetTest.await(() -> read(out).contains(text), "target stdout to show '" + text + "'", 60_000);
        }

        void awaitErr(String text, int times) throws Exception {
            NetTest.await(() -> count(read(err), text) >= times,
                    "target stderr to show '" + text + "' " + times + " time(s)", 60_000);
        }

        /** Lets the program finish. */
        void stopProgram() throws IOException { Files.writeString(stop, "stop"); }

        Jvm.Result await(int seconds) throws Exception {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                fail("the program did not end within " + seconds + " s\n" + err());
            }
            return new Jvm.Result(process.exitValue(), out(), err(), dir);
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive())
                process.destroyForcibly().waitFor();
        }
    }

    // ---- helpers ---------------------------------------------------------------------

    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }

    static int count(String hay, String needle) {
        int n = 0;
        for (int i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + 1))
            n++;
        return n;
    }

    static long countLines(String text, String prefix) {
        return text.lines().filter(l -> l.startsWith(prefix)).count();
    }

    static void await(BooleanSupplier cond, String what, long ms) throws InterruptedException {
        long deadline = System.nanoTime() + ms * 1_000_000;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline)
                fail("timed out waiting for " + what);
            Thread.sleep(20);
        }
    }

    static byte[] cat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts)
            b.writeBytes(p);
        return b.toByteArray();
    }

    static byte[] u2(int v) { return ByteBuffer.allocate(2).putShort((short) v).array(); }
    static byte[] u4(int v) { return ByteBuffer.allocate(4).putInt(v).array(); }
    static byte[] u8(long v) { return ByteBuffer.allocate(8).putLong(v).array(); }
    static byte[] f4(float v) { return ByteBuffer.allocate(4).putFloat(v).array(); }

    /** u1 tag, u4 serial, u4 length, body. */
    static byte[] cmd(int tag, int serial, byte[] body) {
        return ByteBuffer.allocate(9 + body.length).put((byte) tag).putInt(serial).putInt(body.length)
                .put(body).array();
    }

    static byte[] cmd(int tag, int serial) { return cmd(tag, serial, new byte[0]); }

    static byte[] control(int serial, int sub, byte[] arg) { return cmd(CONTROL, serial, cat(u2(sub), arg)); }

    static byte[] control(int serial, int sub) { return control(serial, sub, new byte[0]); }

    /** One top-level record of a binary stream. */
    record Rec(int tag, byte[] body) {
        ByteBuffer buf() { return ByteBuffer.wrap(body); }
    }

    /** The records of a binary stream, checking the header and that every length fits. */
    static List<Rec> records(byte[] d) {
        String magic = "JAVA PROFILE 1.0.2\0";
        assertTrue(d.length >= magic.length() + 12, "stream too short: " + d.length + " bytes");
        assertEquals(magic, new String(d, 0, magic.length(), StandardCharsets.ISO_8859_1));
        ByteBuffer b = ByteBuffer.wrap(d);
        b.position(magic.length());
        assertEquals(8, b.getInt(), "identifier size");
        b.getLong();
        List<Rec> out = new ArrayList<>();
        while (b.hasRemaining()) {
            int at = b.position();
            assertTrue(b.remaining() >= 9, "truncated record header at offset " + at);
            int tag = b.get() & 0xFF;
            b.getInt();
            long len = b.getInt() & 0xFFFFFFFFL;
            assertTrue(len <= b.remaining(), "record 0x" + Integer.toHexString(tag) + " at " + at
                    + " claims " + len + " bytes, " + b.remaining() + " left");
            byte[] body = new byte[(int) len];
            b.get(body);
            out.add(new Rec(tag, body));
        }
        return out;
    }

    static List<Rec> withTag(List<Rec> recs, int tag) {
        return recs.stream().filter(r -> r.tag() == tag).toList();
    }

    /** CONTROL SETTINGS records so far: {flags, depth} each. */
    static List<int[]> controlSettings(byte[] stream) {
        List<int[]> out = new ArrayList<>();
        for (Rec r : withTag(records(stream), TAG_CONTROL_SETTINGS)) {
            assertEquals(6, r.body().length);
            ByteBuffer b = r.buf();
            out.add(new int[] {b.getInt(), b.getShort() & 0xFFFF});
        }
        return out;
    }

    /** Waits for CONTROL SETTINGS record number n (from 1) and checks it. */
    static void expectControlSettings(Peer peer, int n, int flags, int depth) throws Exception {
        await(() -> controlSettingsCount(peer) >= n, "CONTROL SETTINGS record " + n, 30_000);
        List<int[]> all = controlSettings(peer.received());
        assertEquals(n, all.size(), "CONTROL SETTINGS records");
        assertEquals(flags, all.get(n - 1)[0], "flags of CONTROL SETTINGS " + n);
        assertEquals(depth, all.get(n - 1)[1], "depth of CONTROL SETTINGS " + n);
    }

    static int controlSettingsCount(Peer peer) {
        byte[] d = peer.received();
        // records() may see a record cut in the middle while bytes arrive: count whole ones
        int n = 0;
        ByteBuffer b = ByteBuffer.wrap(d);
        if (d.length < 31)
            return 0;
        b.position(31);
        while (b.remaining() >= 9) {
            int tag = b.get() & 0xFF;
            b.getInt();
            long len = b.getInt() & 0xFFFFFFFFL;
            if (len > b.remaining())
                break;
            b.position(b.position() + (int) len);
            if (tag == TAG_CONTROL_SETTINGS)
                n++;
        }
        return n;
    }

    /** The object id of the live thread named name, from STRING and START THREAD records. */
    static long threadObjectId(byte[] stream, String name) {
        List<Rec> recs = records(stream);
        Map<Long, String> strings = new java.util.HashMap<>();
        for (Rec r : withTag(recs, TAG_STRING)) {
            ByteBuffer b = r.buf();
            long id = b.getLong();
            strings.put(id, new String(r.body(), 8, r.body().length - 8, StandardCharsets.UTF_8));
        }
        for (Rec r : withTag(recs, TAG_START_THREAD)) {
            ByteBuffer b = r.buf();
            b.getInt();
            long obj = b.getLong();
            b.getInt();
            if (name.equals(strings.get(b.getLong())))
                return obj;
        }
        throw new AssertionError("no START THREAD for " + name);
    }

    /** tools/hprof-read on a saved stream, when the build has it. */
    static void strictCheck(Path file) throws Exception {
        String tool = System.getenv("HPROF_READ");
        if (tool == null || tool.isEmpty())
            return;
        HprofRead.Report report = HprofRead.check(file);
        assertEquals(0, report.exit(), report.output());
    }

    static Path save(Path dir, byte[] data) throws IOException {
        Path file = dir.resolve("stream.hprof");
        Files.write(file, data);
        return file;
    }

    static String dumpDone(Peer peer) { return "dump to 127.0.0.1:" + peer.port() + " done"; }

    // ---- the tests -------------------------------------------------------------------

    /** Every command, in the binary format: its answer, the stream's framing, and EXIT. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void everyCommandIsAnsweredAndExitEndsTheVm(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("net-commands");
        Path gcLog = dir.resolve("gc.log");
        try (Peer peer = Peer.loopback();
             Target t = Target.start(jdk, dir, List.of("-Xlog:gc:file=" + gcLog,
                     Jvm.agentpath("heap=all,cpu=samples,format=b,net=127.0.0.1:" + peer.port())),
                     "quiet")) {
            peer.accept(true);
            t.awaitOut("target ready");
            int serial = 0;

            // FORCE GC: exactly one collection with JVMTI's cause, nothing written. (heap=sites
            // forces one of its own at VM init.)
            String forced = "(JvmtiEnv ForceGarbageCollection)";
            int gcsBefore = count(read(gcLog), forced);
            peer.send(cmd(FORCE_GC, ++serial));
            await(() -> count(read(gcLog), forced) == gcsBefore + 1, "the forced GC", 30_000);
            t.awaitErr("socket command FORCE GC (serial 1)", 1);

            // CONTROL: each answered by CONTROL SETTINGS (flags 1 = alloc traces, 2 = cpu sampling).
            peer.send(control(++serial, 6, u2(7)));
            expectControlSettings(peer, 1, 0x3, 7);
            peer.send(control(++serial, 2));
            expectControlSettings(peer, 2, 0x2, 7);
            peer.send(control(++serial, 4, u8(0)));
            expectControlSettings(peer, 3, 0x0, 7);
            long mainId = threadObjectId(peer.received(), "main");
            peer.send(control(++serial, 3, u8(mainId)));
            expectControlSettings(peer, 4, 0x2, 7);
            peer.send(control(++serial, 3, u8(0xDEAD0000L)));
            t.awaitErr("no live thread has object id 0xdead0000; ignored", 1);
            peer.send(control(++serial, 1));
            expectControlSettings(peer, 5, 0x3, 7); // the unknown thread wrote nothing
            peer.send(control(++serial, 5));
            expectControlSettings(peer, 6, 0x3, 7);
            peer.send(control(++serial, 6, u4(12))); // depth as u4
            expectControlSettings(peer, 7, 0x3, 12);

            // Dump commands: each one dump, in order. After each, a marker (CONTROL depth
            // 100 + k, answered by a CONTROL SETTINGS record with that depth) closes its part
            // of the stream, so each command's records can be counted exactly.
            String done = dumpDone(peer);
            int dumps = 0;
            // CONTROL alloc traces on may collect too (heap=sites retires TLABs that way), so
            // the dump commands' collections are counted from here.
            int gcsBeforeDumps = count(read(gcLog), forced);
            byte[][] dumpCommands = {
                cmd(DUMP_TRACES, 0), cmd(ALLOC_SITES, 0, cat(u2(0x2), f4(0.0f))), cmd(HEAP_SUMMARY, 0),
                cmd(CPU_SAMPLES, 0, cat(u2(0), f4(0.5f))), cmd(DUMP_HEAP, 0),
                cmd(ALLOC_SITES, 0, cat(u2(0x1 | 0x4), f4(0.25f)))};
            for (int k = 0; k < dumpCommands.length; k++) {
                byte[] c = dumpCommands[k].clone();
                ByteBuffer.wrap(c).putInt(1, ++serial);
                peer.send(c);
                t.awaitErr(done, ++dumps);
                peer.send(control(++serial, 6, u2(MARKER_DEPTH + k)));
                int marker = MARKER_DEPTH + k;
                await(() -> hasMarker(peer.received(), marker), "marker " + marker, 30_000);
            }
            for (String name : List.of("DUMP TRACES", "HEAP SUMMARY", "CPU SAMPLES", "DUMP HEAP"))
                assertEquals(1, count(t.err(), "socket command " + name + " (serial "), t.err());
            assertEquals(2, count(t.err(), "socket command ALLOC SITES (serial "), t.err());
            int gcsAfterCommands = count(read(gcLog), forced);

            // EXIT THE VM: System.exit(0) on the listener: hooks run, exit dump, prompt end.
            long sent = System.nanoTime();
            peer.send(cmd(EXIT_VM, ++serial));
            Jvm.Result r = t.await(60);
            double seconds = (System.nanoTime() - sent) / 1e9;
            assertEquals(0, r.exit(), r.describe());
            assertTrue(seconds < 10, "EXIT THE VM took " + seconds + " s");
            assertTrue(r.out().contains("hook ran"), r.describe());
            assertFalse(r.out().contains("target done"), r.describe());
            assertEquals(dumps + 1, count(r.err(), done), "the exit dump follows\n" + r.describe());
            assertFalse(r.err().contains("HPROF ERROR"), r.describe());
            assertEquals(1, countLines(r.err(), "HPROF WARNING"), "only the unknown thread id warns\n" + r.describe());
            assertEquals(1, count(r.err(), "HPROF WARNING: socket command CONTROL 3 (serial 6): no live thread has "
                    + "object id 0xdead0000; ignored"), r.describe());
            Jvm.assertNoCrash(r);

            byte[] data = peer.awaitEnd(30_000);
            strictCheck(save(dir, data));
            List<List<Rec>> parts = splitAtMarkers(records(data), dumpCommands.length);
            // parts[k] holds what command k wrote; parts[last] the exit dump. A profile counts
            // as present when the exit dump (every section) has its records.
            List<Rec> exit = parts.get(dumpCommands.length);
            boolean sites = !withTag(exit, TAG_ALLOC_SITES).isEmpty();
            boolean summary = !withTag(exit, TAG_HEAP_SUMMARY).isEmpty();
            boolean cpu = !withTag(exit, TAG_CPU_SAMPLES).isEmpty();
            boolean heap = !withTag(exit, TAG_HEAP_DUMP_END).isEmpty();
            // Profiles land on main in parallel: a profile whose source is in the tree under
            // test must answer (its records counted exactly below); one not there yet writes
            // nothing, and that is checked exactly too.
            requirePresent("heap_sites.c", sites, "ALLOC SITES");
            requirePresent("heap_sites.c", summary, "HEAP SUMMARY");
            requirePresent("cpu_samples.c", cpu, "CPU SAMPLES");
            requirePresent("heap_dump.c", heap, "HEAP DUMP");
            expectDumpRecords(parts.get(0), 0, 0, 0, 0);                       // DUMP TRACES
            expectDumpRecords(parts.get(1), sites ? 1 : 0, 0, 0, 0);           // ALLOC SITES
            expectDumpRecords(parts.get(2), 0, summary ? 1 : 0, 0, 0);         // HEAP SUMMARY
            expectDumpRecords(parts.get(3), 0, 0, cpu ? 1 : 0, 0);             // CPU SAMPLES
            expectDumpRecords(parts.get(4), 0, 0, 0, heap ? 1 : 0);            // DUMP HEAP
            expectDumpRecords(parts.get(5), sites ? 1 : 0, 0, 0, 0);           // ALLOC SITES again
            // ALLOC SITES with flag 0x4 forced one more collection (heap=sites does it).
            assertEquals(gcsBeforeDumps + (sites ? 1 : 0), gcsAfterCommands, read(gcLog));
            if (sites) {
                expectSitesHeader(parts.get(1), 0x2, 0.0f);
                expectSitesHeader(parts.get(5), 0x1 | 0x4, 0.25f);
            }
            if (heap)
                assertFalse(withTag(parts.get(4), TAG_HEAP_DUMP_SEGMENT).isEmpty());
            // DUMP TRACES leaves no trace unwritten: every trace serial named up to there is
            // defined before it (the strict reader checks the rest of the stream).
            System.out.println("NetTest profiles present: sites=" + sites + " summary=" + summary
                    + " cpu=" + cpu + " heap=" + heap);
        }
    }

    static void requirePresent(String agentSource, boolean present, String records) {
        if (Files.exists(Jvm.sourceRoot().resolve("agent").resolve(agentSource)))
            assertTrue(present, "agent/" + agentSource + " is in the tree but the exit dump has no " + records);
    }

    static final int MARKER_DEPTH = 100;
    static final int TAG_ALLOC_SITES = 0x06, TAG_HEAP_SUMMARY = 0x07, TAG_CPU_SAMPLES = 0x0D,
            TAG_HEAP_DUMP_SEGMENT = 0x1C, TAG_HEAP_DUMP_END = 0x2C;

    static boolean isMarker(Rec r, int depth) {
        return r.tag() == TAG_CONTROL_SETTINGS && r.body().length == 6 && (r.buf().getShort(4) & 0xFFFF) == depth;
    }

    static boolean hasMarker(byte[] stream, int depth) {
        return completeRecords(stream).stream().anyMatch(r -> isMarker(r, depth));
    }

    /** The whole records received so far (a record still arriving is left out). */
    static List<Rec> completeRecords(byte[] d) {
        List<Rec> out = new ArrayList<>();
        if (d.length < 31)
            return out;
        ByteBuffer b = ByteBuffer.wrap(d);
        b.position(31);
        while (b.remaining() >= 9) {
            int tag = b.get() & 0xFF;
            b.getInt();
            long len = b.getInt() & 0xFFFFFFFFL;
            if (len > b.remaining())
                break;
            byte[] body = new byte[(int) len];
            b.get(body);
            out.add(new Rec(tag, body));
        }
        return out;
    }

    /** Records after the first marker (depth MARKER_DEPTH) cut at each next marker's first
     * occurrence: n + 1 parts, the last one everything after the last marker. The part before
     * the first dump command is dropped. */
    static List<List<Rec>> splitAtMarkers(List<Rec> recs, int n) {
        List<List<Rec>> parts = new ArrayList<>();
        int next = MARKER_DEPTH;
        List<Rec> cur = new ArrayList<>();
        // The part of command k runs from the end of marker k-1 to marker k; command 0 starts
        // after the last CONTROL SETTINGS of the CONTROL phase (depth 12).
        int firstDump = -1;
        for (int i = 0; i < recs.size(); i++)
            if (recs.get(i).tag() == TAG_CONTROL_SETTINGS && (recs.get(i).buf().getShort(4) & 0xFFFF) == 12)
                firstDump = i;
        assertTrue(firstDump >= 0, "no CONTROL SETTINGS with depth 12");
        for (int i = firstDump + 1; i < recs.size(); i++) {
            Rec r = recs.get(i);
            if (next < MARKER_DEPTH + n && isMarker(r, next)) {
                parts.add(cur);
                cur = new ArrayList<>();
                next++;
                continue;
            }
            cur.add(r);
        }
        parts.add(cur);
        assertEquals(n + 1, parts.size(), "markers found");
        return parts;
    }

    static void expectDumpRecords(List<Rec> part, int sites, int summary, int cpu, int heapDumps) {
        assertEquals(sites, withTag(part, TAG_ALLOC_SITES).size(), "ALLOC SITES records");
        assertEquals(summary, withTag(part, TAG_HEAP_SUMMARY).size(), "HEAP SUMMARY records");
        assertEquals(cpu, withTag(part, TAG_CPU_SAMPLES).size(), "CPU SAMPLES records");
        assertEquals(heapDumps, withTag(part, TAG_HEAP_DUMP_END).size(), "HEAP DUMP END records");
        if (heapDumps == 0)
            assertEquals(0, withTag(part, TAG_HEAP_DUMP_SEGMENT).size(), "HEAP DUMP SEGMENT records");
    }

    /** ALLOC SITES starts with u2 flags and a u4 float cutoff: the command's own. */
    static void expectSitesHeader(List<Rec> part, int flags, float cutoff) {
        ByteBuffer b = withTag(part, TAG_ALLOC_SITES).get(0).buf();
        assertEquals(flags, b.getShort() & 0xFFFF, "ALLOC SITES flags");
        assertEquals(cutoff, b.getFloat(), "ALLOC SITES cutoff");
    }

    /** The ascii format over a socket: commands run, CONTROL writes no record there, a
     * CPU SAMPLES command while no CPU profile runs warns once and is answered with an empty
     * section each time, and DUMP HEAP dumps the heap without heap=dump. */
    @Test
    void asciiStreamAndCommandsForProfilesThatAreOff() throws Exception {
        Path dir = Jvm.workDir("net-ascii");
        try (Peer peer = Peer.loopback();
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("heap=sites,net=127.0.0.1:" + peer.port())), "threads")) {
            peer.accept(true);
            t.awaitOut("target ready");
            peer.send(cmd(CPU_SAMPLES, 1, cat(u2(0), f4(0.01f))));
            peer.send(cmd(CPU_SAMPLES, 2, cat(u2(0), f4(0.01f))));
            peer.send(cmd(DUMP_HEAP, 3));
            peer.send(control(4, 6, u2(2)));
            peer.send(cmd(DUMP_TRACES, 5));
            peer.send(cmd(ALLOC_SITES, 6, cat(u2(0), f4(0.0f))));
            t.awaitErr(dumpDone(peer), 3);
            peer.send(cmd(EXIT_VM, 7));
            Jvm.Result r = t.await(60);
            assertEquals(0, r.exit(), r.describe());
            assertEquals(1, count(r.err(), "HPROF WARNING: socket command CPU SAMPLES: nothing to write without "
                    + "wall=y, cpu=samples, cpu=times or cpu=old"), r.describe());
            assertEquals(0, count(r.err(), "socket command DUMP HEAP: nothing to write"), r.describe());
            String text = new String(peer.awaitEnd(30_000), StandardCharsets.UTF_8);
            assertEquals(2, count(text, "CPU SAMPLES BEGIN (total = 0)"), text);
            assertEquals(2, count(text, "CPU SAMPLES END"), text);
            assertEquals(1, count(text, "HEAP DUMP BEGIN ("), text);
            assertEquals(1, count(text, "HEAP DUMP END"), text);
            assertTrue(text.startsWith("JAVA PROFILE 1.0.1, created "), text);
            assertTrue(text.contains("THREAD START (obj="), text);
            assertTrue(text.contains("name=\"HPROF listener\""), text);
            assertFalse(text.contains("\0"), "no binary record in an ascii stream");
            // heap=sites (when present) writes one SITES section for the command, one at exit.
            int sites = count(text, "SITES BEGIN (ordered by live bytes)");
            assertTrue(sites == 0 || sites == 2, sites + " SITES sections\n" + text);
            requirePresent("heap_sites.c", sites == 2, "SITES sections");
            if (sites == 2)
                assertEquals(2, count(text, "SITES END"), text);
        }
    }

    /** Malformed commands, trickled bytes, a lying length and random bytes: reported once
     * each, the parser recovers where it can, and the program runs to its end. */
    @Test
    void garbageIsSurvived() throws Exception {
        Path dir = Jvm.workDir("net-garbage");
        try (Peer peer = Peer.loopback();
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("heap=sites,format=b,net=127.0.0.1:" + peer.port())), "quiet")) {
            peer.accept(true);
            t.awaitOut("target ready");
            peer.send(cmd(0x42, 1, "hello".getBytes(StandardCharsets.US_ASCII))); // unknown tag
            peer.send(cmd(ALLOC_SITES, 2, u2(0)));                                 // short body
            peer.send(cmd(CPU_SAMPLES, 3, cat(u2(0), f4(Float.NaN))));             // bad cutoff
            peer.send(control(4, 9));                                               // no sub option 9
            peer.send(control(5, 6, u2(5000)));                                     // depth too large
            peer.send(control(6, 6, u2(9)));                                        // fine
            expectControlSettings(peer, 1, 0x1, 9);
            for (byte b : control(7, 6, u2(5))) {                                   // one byte at a time
                peer.send(new byte[] {b});
                Thread.sleep(30);
            }
            expectControlSettings(peer, 2, 0x1, 5);
            for (int i = 0; i < 15; i++)
                peer.send(cmd(0x00, 100 + i));                                      // 15 more unknown
            peer.send(cat(new byte[] {(byte) DUMP_HEAP}, u4(8), u4(0x7FFFFFFF)));  // a length that lies
            peer.send(control(9, 6, u2(3)));                                        // swallowed: never run
            byte[] noise = new byte[64 * 1024];
            new Random(42).nextBytes(noise);
            peer.send(noise);
            t.awaitErr("not a command stream", 1);
            Thread.sleep(500);
            assertEquals(2, controlSettingsCount(peer), "nothing runs after the lying length");

            long stopAt = System.nanoTime();
            t.stopProgram();
            Jvm.Result r = t.await(60);
            assertTrue((System.nanoTime() - stopAt) / 1e9 < 10, "ended promptly");
            assertEquals(0, r.exit(), r.describe());
            assertTrue(r.out().contains("target done"), r.describe());
            Jvm.assertNoCrash(r);
            String err = r.err();
            assertEquals(8, countLines(err, "HPROF WARNING: socket command"), err);
            assertEquals(1, count(err, "HPROF WARNING: socket command unknown (tag 0x42, serial 1, length 5) "
                    + "ignored: unknown command tag"), err);
            assertEquals(1, count(err, "HPROF WARNING: socket command ALLOC SITES (tag 0x03, serial 2, length 2) "
                    + "ignored: command body too short"), err);
            assertEquals(1, count(err, "(tag 0x07, serial 3, length 6) ignored: cutoff is not a number"), err);
            assertEquals(1, count(err, "(tag 0x08, serial 4, length 2) ignored: unknown CONTROL sub option"), err);
            assertEquals(1, count(err, "(tag 0x08, serial 5, length 4) ignored: stack depth out of range"), err);
            assertEquals(1, count(err, "further bad socket commands are counted, not reported one by one"), err);
            assertEquals(1, count(err, "HPROF WARNING: 12 more bad socket commands were ignored"), err);
            assertEquals(1, countLines(err, "HPROF ERROR"), err);
            assertEquals(1, count(err, "HPROF ERROR: socket command with tag 0x02, serial 8 and length 2147483647 "
                    + "(more than 65536): not a command stream; no more commands are read"), err);
            byte[] data = peer.awaitEnd(30_000);
            assertEquals(2, withTag(records(data), TAG_CONTROL_SETTINGS).size());
            strictCheck(save(dir, data));
        }
    }

    /** The peer goes away (orderly close inside a command, or a reset): the program runs on to
     * its end; the lost connection is one line, the cut command another. */
    @ParameterizedTest(name = "reset={0}")
    @ValueSource(booleans = {false, true})
    void droppedPeerLeavesTheProgramRunning(boolean reset) throws Exception {
        Path dir = Jvm.workDir("net-dropped");
        try (Peer peer = Peer.loopback();
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("heap=sites,net=127.0.0.1:" + peer.port())), "threads")) {
            peer.accept(true);
            t.awaitOut("target ready");
            byte[] sites = cmd(ALLOC_SITES, 1, cat(u2(0), f4(0.0f)));
            peer.send(java.util.Arrays.copyOf(sites, 11)); // a command cut after 2 body bytes
            Thread.sleep(300);
            if (reset)
                peer.socket.setSoLinger(true, 0);
            peer.socket.close();
            Thread.sleep(1000); // the program keeps starting threads: records to write
            long stopAt = System.nanoTime();
            t.stopProgram();
            Jvm.Result r = t.await(60);
            assertTrue((System.nanoTime() - stopAt) / 1e9 < 10, "ended promptly\n" + r.describe());
            assertEquals(0, r.exit(), r.describe());
            assertTrue(r.out().contains("target done"), r.describe());
            Jvm.assertNoCrash(r);
            String err = r.err();
            assertEquals(1, countLines(err, "HPROF ERROR"), err);
            assertEquals(1, count(err, "HPROF ERROR: cannot write 127.0.0.1:" + peer.port() + ": "), err);
            assertTrue(err.contains("; profiling output stopped"), err);
            if (reset)
                assertEquals(1, count(err, "HPROF WARNING: socket commands: Connection reset by peer; "
                        + "no more commands are read"), err);
            else
                assertEquals(1, count(err, "HPROF WARNING: socket command ALLOC SITES (tag 0x03) cut short: "
                        + "the peer closed the connection inside it"), err);
            assertEquals(1, countLines(err, "HPROF WARNING"), err);
        }
    }

    /** A peer that accepts and never reads: the program's threads never wait for it (their
     * records go to the agent's spool), the agent gives the peer up 10 s after it stopped
     * accepting, says so once, and the program runs to its end. */
    @Test
    void peerThatStopsReadingNeverHoldsTheProgram() throws Exception {
        Path dir = Jvm.workDir("net-stalled");
        try (Peer peer = new Peer(InetAddress.getByName("127.0.0.1"), 4096);
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("heap=sites,net=127.0.0.1:" + peer.port())), "burst=4000")) {
            peer.accept(false);
            long start = System.nanoTime();
            t.awaitOut("burst done");
            double seconds = (System.nanoTime() - start) / 1e9;
            String line = "HPROF ERROR: cannot write 127.0.0.1:" + peer.port()
                    + ": the receiver accepted no data for 10000 ms; profiling output stopped";
            t.awaitErr(line, 1);
            double failedAfter = (System.nanoTime() - start) / 1e9;
            t.stopProgram();
            Jvm.Result r = t.await(60);
            assertEquals(0, r.exit(), r.describe());
            assertTrue(r.out().contains("target done"), r.describe());
            Jvm.assertNoCrash(r);
            String err = r.err();
            assertEquals(1, countLines(err, "HPROF ERROR"), err);
            assertEquals(1, count(err, line), err);
            assertTrue(seconds < 9, "the burst took " + seconds + " s: it waited for the peer");
            assertTrue(failedAfter >= 10 && failedAfter < 40, "gave up after " + failedAfter + " s");
        }
    }

    /** DUMP HEAP commands while earlier dumps still wait for the peer (which reads nothing):
     * a dump that finds earlier output in the spool waits (here 1 s, HPROF_DUMP_SEND_WAIT_MS)
     * for it to drain, then is refused with one line; the program never waits for the peer.
     * (The socket's buffers may take the whole first dump, so four commands are sent: the
     * first is never refused, at least one later one is.) */
    @Test
    void secondDumpWaitsForTheFirstThenIsRefused() throws Exception {
        Path dir = Jvm.workDir("net-second-dump");
        try (Peer peer = new Peer(InetAddress.getByName("127.0.0.1"), 4096);
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("heap=dump,format=b,doe=n,net=127.0.0.1:" + peer.port())), "quiet",
                     Map.of("HPROF_DUMP_SEND_WAIT_MS", "1000"))) {
            peer.accept(false);
            t.awaitOut("target ready");
            long start = System.nanoTime();
            peer.send(cat(cmd(DUMP_HEAP, 1), cmd(DUMP_HEAP, 2), cmd(DUMP_HEAP, 3), cmd(DUMP_HEAP, 4)));
            t.awaitErr("HPROF WARNING: heap dump refused: ", 1);
            double seconds = (System.nanoTime() - start) / 1e9;
            t.stopProgram();
            Jvm.Result r = t.await(90);
            String err = r.err();
            assertEquals(0, r.exit(), r.describe());
            int refused = count(err, "HPROF WARNING: heap dump refused: ");
            assertTrue(refused >= 1 && refused <= 3, err);
            assertEquals(4, count(err, "HPROF: socket command DUMP HEAP (serial "), err);
            assertTrue(err.indexOf("HPROF WARNING: heap dump refused: ")
                    > err.indexOf("HPROF: socket command DUMP HEAP (serial 2)"), "the first dump was refused\n" + err);
            assertTrue(err.contains("were still waiting to be sent to 127.0.0.1:" + peer.port()
                    + " after 1.0 s (the receiver reads slowly)"), err);
            assertTrue(seconds >= 1 && seconds < 9, "refused after " + seconds + " s\n" + err);
        }
    }

    /** Commands still queued when EXIT THE VM ends the VM are not run: one line says how many,
     * and the peer's stream ends cleanly (end of stream, not a reset) after the whole exit
     * output, which reads as a complete file. */
    @Test
    void commandsLeftAtExitAreCountedAndTheStreamEndsCleanly() throws Exception {
        Path dir = Jvm.workDir("net-exit-left");
        try (Peer peer = Peer.loopback();
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("heap=sites,format=b,net=127.0.0.1:" + peer.port())), "quiet")) {
            peer.accept(true);
            t.awaitOut("target ready");
            peer.send(cat(cmd(EXIT_VM, 1), cmd(FORCE_GC, 2), cmd(DUMP_TRACES, 3), cmd(HEAP_SUMMARY, 4)));
            Jvm.Result r = t.await(60);
            byte[] data = peer.awaitEnd(30_000);
            assertEquals(0, r.exit(), r.describe());
            Jvm.assertNoCrash(r);
            assertNull(peer.readError, "the stream ended with " + peer.readError);
            assertEquals(1, count(r.err(), "HPROF WARNING: 3 socket commands were not run: the VM was exiting"),
                    r.err());
            strictCheck(save(dir, data));
        }
    }

    /** IPv6 literal and a host name. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"[::1]", "localhost"})
    void ipv6AndHostNames(String host) throws Exception {
        InetAddress bindTo = InetAddress.getByName(host.equals("[::1]") ? "::1" : "127.0.0.1");
        Peer p;
        try {
            p = new Peer(bindTo, 0);
        } catch (IOException e) {
            Assumptions.abort("cannot listen on " + bindTo + ": " + e);
            return;
        }
        Path dir = Jvm.workDir("net-host");
        try (Peer peer = p;
             Target t = Target.start(Jvm.defaultJdk(), dir,
                     List.of(Jvm.agentpath("format=b,net=" + host + ":" + peer.port())), "quiet")) {
            peer.accept(true);
            t.awaitOut("target ready");
            peer.send(control(1, 6, u2(6)));
            expectControlSettings(peer, 1, 0x1, 6);
            peer.send(cmd(EXIT_VM, 2));
            Jvm.Result r = t.await(60);
            assertEquals(0, r.exit(), r.describe());
            assertFalse(r.err().contains("HPROF ERROR"), r.describe());
            byte[] data = peer.awaitEnd(30_000);
            assertEquals(1, withTag(records(data), TAG_CONTROL_SETTINGS).size());
            strictCheck(save(dir, data));
        }
    }

    /** A peer that cannot be reached at start-up stops the VM with one clear line. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"closed-port", "no-such-host.invalid:9000"})
    void unreachablePeerStopsStartup(String what) throws Exception {
        String net = what;
        if (what.equals("closed-port")) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
                net = "127.0.0.1:" + s.getLocalPort();
            }
        }
        Jvm.Result r = Jvm.run(Jvm.defaultJdk(), Jvm.workDir("net-unreachable"),
                List.of(Jvm.agentpath("net=" + net)), "Hello");
        assertNotEquals(0, r.exit(), r.describe());
        assertFalse(r.out().contains("hello done"), r.describe());
        Jvm.assertNoCrash(r);
        List<String> ours = r.err().lines().filter(l -> l.startsWith("HPROF ERROR")).toList();
        assertEquals(1, ours.size(), r.describe());
        if (what.equals("closed-port"))
            assertTrue(ours.get(0).startsWith("HPROF ERROR: cannot connect to net=" + net + ": Connection refused"),
                    ours.get(0));
        else
            assertTrue(ours.get(0).startsWith("HPROF ERROR: cannot resolve net=" + net + ": "), ours.get(0));
    }

    /** A peer that never answers the connect (its accept queue is full, so the kernel drops
     * the SYNs) costs the start-up 10 s, not the kernel's two minutes of SYN retries. */
    @Test
    void silentPeerTimesOutAtStartup() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            List<java.nio.channels.SocketChannel> fill = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    java.nio.channels.SocketChannel c = java.nio.channels.SocketChannel.open();
                    c.configureBlocking(false);
                    c.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), server.getLocalPort()));
                    fill.add(c);
                }
                Thread.sleep(200);
                long start = System.nanoTime();
                Jvm.Result r = Jvm.run(Jvm.defaultJdk(), Jvm.workDir("net-silent"),
                        List.of(Jvm.agentpath("net=127.0.0.1:" + server.getLocalPort())), "Hello");
                double seconds = (System.nanoTime() - start) / 1e9;
                assertNotEquals(0, r.exit(), r.describe());
                assertFalse(r.out().contains("hello done"), r.describe());
                List<String> ours = r.err().lines().filter(l -> l.startsWith("HPROF ERROR")).toList();
                assertEquals(List.of("HPROF ERROR: cannot connect to net=127.0.0.1:" + server.getLocalPort()
                        + ": no answer within 10 s"), ours, r.describe());
                assertTrue(seconds >= 9.5 && seconds < 30, "took " + seconds + " s");
            } finally {
                for (java.nio.channels.SocketChannel c : fill)
                    c.close();
            }
        }
    }

    /** jcmd JVMTI.agent_load with net=: the listener starts in the running VM and takes
     * commands; an unreachable peer fails the load and leaves the VM running. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void attachWithNet(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("net-attach");
        try (Peer peer = Peer.loopback(); Target t = Target.start(jdk, dir, List.of(), "threads")) {
            t.awaitOut("target ready");
            Jvm.Result load = Jvm.exec(List.of(jdk.resolve("bin/jcmd").toString(), Long.toString(t.process.pid()),
                    "JVMTI.agent_load", Jvm.lib().toString(), "\"format=b,net=127.0.0.1:" + peer.port() + "\""),
                    dir, Map.of(), 60);
            assertTrue(load.out().contains("return code: 0"), load.describe());
            peer.accept(true);
            peer.send(control(1, 6, u2(3)));
            expectControlSettings(peer, 1, 0x1, 3);
            peer.send(cmd(EXIT_VM, 2));
            Jvm.Result r = t.await(60);
            assertEquals(0, r.exit(), r.describe());
            assertTrue(r.out().contains("hook ran"), r.describe());
            assertFalse(r.err().contains("HPROF ERROR"), r.describe());
            byte[] data = peer.awaitEnd(30_000);
            assertTrue(withTag(records(data), TAG_START_THREAD).size() >= 2);
            strictCheck(save(dir, data));
        }
        Path dir2 = Jvm.workDir("net-attach-refused");
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            closed = s.getLocalPort();
        }
        try (Target t = Target.start(jdk, dir2, List.of(), "quiet")) {
            t.awaitOut("target ready");
            Jvm.Result load = Jvm.exec(List.of(jdk.resolve("bin/jcmd").toString(), Long.toString(t.process.pid()),
                    "JVMTI.agent_load", Jvm.lib().toString(), "\"net=127.0.0.1:" + closed + "\""), dir2, Map.of(), 60);
            assertFalse(load.out().contains("return code: 0"), load.describe());
            t.stopProgram();
            Jvm.Result r = t.await(60);
            assertEquals(0, r.exit(), r.describe());
            assertTrue(r.out().contains("target done"), r.describe());
            assertEquals(1, countLines(r.err(), "HPROF ERROR"), r.describe());
            assertTrue(r.err().contains("HPROF ERROR: cannot connect to net=127.0.0.1:" + closed + ": Connection refused"),
                    r.describe());
        }
    }

    // ---- tools/hprof-listen ------------------------------------------------------------

    static Path listenTool() {
        String v = System.getenv("HPROF_LISTEN");
        Path p = v != null && !v.isEmpty() ? Path.of(v) : Jvm.buildRoot().resolve("tools/hprof-listen");
        assertTrue(Files.isExecutable(p), "no hprof-listen at " + p);
        return p;
    }

    static Process startListen(Path dir, Path stdin, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(listenTool().toString(), "--port", "0", "--port-file",
                dir.resolve("port").toString(), "--accept-timeout", "60", "--out", dir.resolve("run.hprof").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                .redirectOutput(dir.resolve("listen.out").toFile()).redirectError(dir.resolve("listen.err").toFile());
        if (stdin != null)
            pb.redirectInput(stdin.toFile());
        return pb.start();
    }

    static int awaitPort(Path dir) throws Exception {
        Path f = dir.resolve("port");
        await(() -> Files.exists(f), "hprof-listen's port file", 30_000);
        return Integer.parseInt(Files.readString(f).trim());
    }

    /** The front end with -c commands and a binary stream; the saved file passes the strict reader. */
    @ParameterizedTest(name = "JDK {0}")
    @MethodSource("hprof.tests.Jvm#jdks")
    void hprofListenSavesTheStreamAndSendsCommands(int feature) throws Exception {
        Path jdk = Jvm.jdkOrSkip(feature);
        Path dir = Jvm.workDir("net-listen");
        Process listen = startListen(dir, null, "-c", "control depth 5", "-c", "gc", "-c", "traces",
                "-c", "control alloc off", "-c", "sleep 0.5", "-c", "exit");
        try {
            int port = awaitPort(dir);
            Jvm.Result r = Jvm.run(jdk, dir, List.of(Jvm.agentpath("heap=sites,format=b,net=localhost:" + port)),
                    "NetTarget", dir.resolve("stop").toString(), "quiet");
            assertEquals(0, r.exit(), r.describe());
            assertTrue(r.out().contains("hook ran"), r.describe());
            assertFalse(r.out().contains("target done"), "ended by EXIT THE VM\n" + r.describe());
            assertTrue(listen.waitFor(30, TimeUnit.SECONDS), "hprof-listen did not end");
            String lerr = read(dir.resolve("listen.err"));
            assertEquals(0, listen.exitValue(), lerr);
            for (String s : List.of("listening on [::]:" + port, "agent connected from ",
                    "sent CONTROL (serial 1)", "sent FORCE GC (serial 2)", "sent DUMP TRACES (serial 3)",
                    "sent CONTROL (serial 4)", "sent EXIT THE VM (serial 5)", "the agent closed the connection; "))
                assertTrue(lerr.contains(s), "hprof-listen: no '" + s + "'\n" + lerr);
            byte[] data = Files.readAllBytes(dir.resolve("run.hprof"));
            List<int[]> cs = controlSettings(data);
            assertEquals(2, cs.size());
            assertEquals(5, cs.get(0)[1]);
            assertEquals(0x1, cs.get(0)[0]);
            assertEquals(0x0, cs.get(1)[0]);
            assertTrue(r.err().contains("socket command DUMP TRACES (serial 3)"), r.describe());
            strictCheck(dir.resolve("run.hprof"));
        } finally {
            listen.destroyForcibly().waitFor();
        }
    }

    /** The front end reading commands from stdin, with an ascii stream. */
    @Test
    void hprofListenReadsCommandsFromStdin() throws Exception {
        Path dir = Jvm.workDir("net-listen-stdin");
        Path commands = dir.resolve("commands.txt");
        Files.writeString(commands, "# a comment\n\nbogus command\nsummary\nsleep 0.3\nexit\n");
        Process listen = startListen(dir, commands);
        try {
            int port = awaitPort(dir);
            Jvm.Result r = Jvm.run(Jvm.defaultJdk(), dir, List.of(Jvm.agentpath("heap=sites,net=127.0.0.1:" + port)),
                    "NetTarget", dir.resolve("stop").toString(), "quiet");
            assertEquals(0, r.exit(), r.describe());
            assertFalse(r.out().contains("target done"), r.describe());
            assertTrue(listen.waitFor(30, TimeUnit.SECONDS), "hprof-listen did not end");
            String lerr = read(dir.resolve("listen.err"));
            assertEquals(0, listen.exitValue(), lerr);
            assertTrue(lerr.contains("hprof-listen: unknown command 'bogus' (try: help)"), lerr);
            assertTrue(lerr.contains("sent HEAP SUMMARY (serial 1)"), lerr);
            assertTrue(lerr.contains("sent EXIT THE VM (serial 2)"), lerr);
            String text = Files.readString(dir.resolve("run.hprof"));
            assertTrue(text.startsWith("JAVA PROFILE 1.0.1, created "), text);
            assertTrue(r.err().contains("socket command HEAP SUMMARY (serial 1)"), r.describe());
        } finally {
            listen.destroyForcibly().waitFor();
        }
    }
}
