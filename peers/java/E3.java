// E3 peer: IO-bound work under virtual threads, CPU-bound work under platform
// threads. Needs Java 21+ (virtual threads).
//
// Run (single-file source launcher):
//   java -Djdk.virtualThreadScheduler.parallelism=1 \
//        -Djdk.virtualThreadScheduler.maxPoolSize=1 \
//        peers/java/E3.java io <ms> [<ms>...]
//   java peers/java/E3.java cpu <jobs> <bytes> threads
// Prints one line: "sequential_ns=<int> threaded_ns=<int>": the
// System.nanoTime() wall time of the jobs one after another, then of the same
// jobs in a thread each, all joined.
//
// io: each job sleeps (Thread.sleep) the given milliseconds, the threads are
// virtual. The two properties give the virtual-thread scheduler one carrier
// thread, the one OS thread fibra's green threads and Go with GOMAXPROCS=1 use
// (main() sets them itself if they are left out, as E1.java does). The work
// runs in a "main" virtual thread on that carrier.
// cpu: each job deflates (java.util.zip.Deflater: zlib format, default level)
// the same <bytes> of random hex text: the digits of xorshift32 outputs from
// seed 2463534242, each output written as 4 little-endian bytes, high nibble
// first (the same text fibra-bench, the Go and the Ruby peers deflate);
// <bytes> must be a multiple of 8. The threads are platform threads, one OS
// thread per job as JRuby's in the seed: a deflate runs in native zlib code,
// which pins a virtual thread to its carrier for the whole job, so virtual
// threads could only add a scheduler in front of the same OS threads.
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.Deflater;

public class E3 {
    static void usage() {
        System.err.println("usage: E3 io <ms> [<ms>...]   (each a non-negative integer)\n"
                + "       E3 cpu <jobs> <bytes> threads   (jobs >= 1, bytes a multiple of 8)");
        System.exit(2);
    }

    // A thread's body. A class rather than a lambda: the first use of a lambda
    // links its call site, which takes milliseconds of the timed part here.
    record Sleeper(long ms) implements Runnable {
        public void run() {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static String io(long[] sleeps) throws InterruptedException {
        long t0 = System.nanoTime();
        for (long ms : sleeps) Thread.sleep(ms);
        long sequential = System.nanoTime() - t0;

        t0 = System.nanoTime();
        Thread[] threads = new Thread[sleeps.length];
        for (int i = 0; i < sleeps.length; i++) {
            threads[i] = Thread.ofVirtual().start(new Sleeper(sleeps[i]));
        }
        for (Thread t : threads) t.join();
        long threaded = System.nanoTime() - t0;
        return "sequential_ns=" + sequential + " threaded_ns=" + threaded;
    }

    // The text every runtime deflates (see the header).
    static byte[] randomHex(int n) {
        byte[] digits = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        byte[] text = new byte[n];
        int x = (int) 2463534242L;
        for (int i = 0; i < n; i += 8) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            for (int b = 0; b < 4; b++) {
                int octet = (x >>> (8 * b)) & 0xff;
                text[i + 2 * b] = digits[octet >>> 4];
                text[i + 2 * b + 1] = digits[octet & 15];
            }
        }
        return text;
    }

    // The length of text deflated in the zlib format at the default level,
    // into a buffer as long as the input (grown if ever too short).
    static int deflatedLen(byte[] text) {
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION);
        try {
            deflater.setInput(text);
            deflater.finish();
            byte[] out = new byte[text.length];
            int len = 0;
            while (!deflater.finished()) {
                if (len == out.length) out = Arrays.copyOf(out, 2 * out.length + 64);
                len += deflater.deflate(out, len, out.length - len);
            }
            return len;
        } finally {
            deflater.end();
        }
    }

    // A thread's body (a class rather than a lambda, as Sleeper).
    record Deflate(byte[] text, int[] lengths, int slot) implements Runnable {
        public void run() {
            lengths[slot] = deflatedLen(text);
        }
    }

    static String cpu(int jobs, byte[] text) throws InterruptedException {
        int[] lengths = new int[2 * jobs];
        long t0 = System.nanoTime();
        for (int i = 0; i < jobs; i++) lengths[i] = deflatedLen(text);
        long sequential = System.nanoTime() - t0;

        t0 = System.nanoTime();
        Thread[] threads = new Thread[jobs];
        for (int i = 0; i < jobs; i++) {
            threads[i] = Thread.ofPlatform().start(new Deflate(text, lengths, jobs + i));
        }
        for (Thread t : threads) t.join();
        long threaded = System.nanoTime() - t0;

        for (int l : lengths) {
            if (l != lengths[0]) {
                System.err.println("deflates of the same input differ in length");
                System.exit(1);
            }
        }
        return "sequential_ns=" + sequential + " threaded_ns=" + threaded;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) usage();
        switch (args[0]) {
            case "io" -> ioMain(args);
            case "cpu" -> {
                if (args.length != 4 || !args[3].equals("threads")) usage();
                if (!args[1].matches("[0-9]{1,6}") || !args[2].matches("[0-9]{1,10}")) usage();
                int jobs = Integer.parseInt(args[1]);
                long bytes = Long.parseLong(args[2]);
                if (jobs < 1 || bytes % 8 != 0 || bytes > Integer.MAX_VALUE - 8) usage();
                System.out.println(cpu(jobs, randomHex((int) bytes)));
            }
            default -> usage();
        }
    }

    static void ioMain(String[] args) throws InterruptedException {
        long[] sleeps = new long[args.length - 1];
        for (int i = 1; i < args.length; i++) {
            if (!args[i].matches("[0-9]{1,9}")) usage();
            sleeps[i - 1] = Long.parseLong(args[i]);
        }
        if (System.getProperty("jdk.virtualThreadScheduler.parallelism") == null)
            System.setProperty("jdk.virtualThreadScheduler.parallelism", "1");
        if (System.getProperty("jdk.virtualThreadScheduler.maxPoolSize") == null)
            System.setProperty("jdk.virtualThreadScheduler.maxPoolSize", "1");

        String[] line = new String[1];
        Throwable[] failure = new Throwable[1];
        Thread main = Thread.ofVirtual().start(() -> {
            try {
                line[0] = io(sleeps);
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        main.join();
        if (failure[0] != null) {
            failure[0].printStackTrace();
            System.exit(1);
        }
        System.out.println(line[0]);
    }
}
