// park-scale peer: N virtual threads, each parked once, all alive at once.
// Needs Java 21+ (virtual threads).
//
// Run (single-file source launcher):
//   java -Djdk.virtualThreadScheduler.parallelism=1 \
//        -Djdk.virtualThreadScheduler.maxPoolSize=1 \
//        peers/java/Park.java <N> <LIMIT_S>
// The two properties give the virtual-thread scheduler one carrier thread,
// the one OS thread that fibra's green threads and tokio's current-thread
// runtime use (main() sets them itself if they are left out, as E1.java
// does). A "main" virtual thread starts N virtual threads that each count
// themselves and park in LockSupport.park() (stopping early if starting
// takes more than LIMIT_S seconds), then yields until every one has parked.
// Prints one line: "n=<N> created=<int> ns=<int> rss_before_kb=<int>
// rss_kb=<int>": the System.nanoTime() wall time from the first start until
// every thread is parked, VmRSS before the first one and VmRSS with all of
// them parked, from /proc/self/status. The threads are kept in an array, as
// a program that means to wake them would.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class Park {
    static void usage() {
        System.err.println("usage: Park <N> <LIMIT_S>   (N >= 1, plain decimal integers)");
        System.exit(2);
    }

    // A "kB" field of /proc/self/status, e.g. VmRSS.
    static long statusKb(String key) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(key + ":")) {
                return Long.parseLong(line.substring(key.length() + 1).replace("kB", "").trim());
            }
        }
        throw new IllegalStateException("no " + key + " in /proc/self/status");
    }

    static final AtomicLong parked = new AtomicLong();

    static String run(int n, long limitNs) throws Exception {
        Thread[] threads = new Thread[n];
        long before = statusKb("VmRSS");
        long t0 = System.nanoTime();
        int created = 0;
        for (; created < n; created++) {
            if (created % 1024 == 0 && System.nanoTime() - t0 > limitNs) {
                System.err.println("the time limit of " + limitNs / 1_000_000_000L + " s");
                break;
            }
            threads[created] = Thread.ofVirtual().start(() -> {
                parked.incrementAndGet();
                LockSupport.park();
            });
        }
        // One carrier: each yield lets the threads queued before this one run
        // to their park.
        while (parked.get() < created) Thread.yield();
        long elapsed = System.nanoTime() - t0;
        return "n=" + n + " created=" + created + " ns=" + elapsed + " rss_before_kb=" + before
            + " rss_kb=" + statusKb("VmRSS");
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].matches("[0-9]{1,9}") || !args[1].matches("[0-9]{1,9}")) usage();
        int n = Integer.parseInt(args[0]);
        long limitNs = Long.parseLong(args[1]) * 1_000_000_000L;
        if (n < 1) usage();
        if (System.getProperty("jdk.virtualThreadScheduler.parallelism") == null)
            System.setProperty("jdk.virtualThreadScheduler.parallelism", "1");
        if (System.getProperty("jdk.virtualThreadScheduler.maxPoolSize") == null)
            System.setProperty("jdk.virtualThreadScheduler.maxPoolSize", "1");

        String[] line = new String[1];
        Throwable[] failure = new Throwable[1];
        Thread main = Thread.ofVirtual().start(() -> {
            try {
                line[0] = run(n, limitNs);
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
        // The parked threads never end; exiting does not wait for them.
        System.exit(0);
    }
}
