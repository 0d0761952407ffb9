/* Whole-process cpu=samples: a thread that compresses with java.util.zip.Deflater in a loop, so
 * nearly all the CPU time is in zlib's native code under Deflater.deflateBytes. Runs until
 * the process has used the given CPU time (or 60 s of wall time passed: a loaded machine),
 * then prints ProcCpu's line. Usage: DeflateLoop <CPU milliseconds> */
import java.util.Random;
import java.util.zip.Deflater;

public class DeflateLoop {
    public static void main(String[] args) throws Exception {
        long millis = Long.parseLong(args[0]);
        byte[] input = new byte[1 << 20];
        Random random = new Random(7);
        for (int i = 0; i < input.length; i++) // compressible, but not trivially
            input[i] = (byte) ('a' + random.nextInt(6) + (i / 4096 % 3));
        byte[] out = new byte[input.length + 1024];
        long total = 0;
        ProcCpu.start();
        long end = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < end && ProcCpu.processMs() < millis) {
            Deflater d = new Deflater(6);
            d.setInput(input);
            d.finish();
            while (!d.finished())
                total += d.deflate(out);
            d.end();
        }
        System.out.println("compressed " + total);
        System.out.println(ProcCpu.line());
    }
}
