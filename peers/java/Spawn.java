// spawn peer: spawn N virtual threads that each return a number, join them
// all, sum. Needs Java 21+ (virtual threads).
//
// Run (single-file source launcher):
//   java -Djdk.virtualThreadScheduler.parallelism=1 \
//        -Djdk.virtualThreadScheduler.maxPoolSize=1 \
//        peers/java/Spawn.java <N>
// The two properties give the virtual-thread scheduler one carrier thread,
// the one OS thread that fibra's green threads, tokio's current-thread
// runtime and Go with GOMAXPROCS=1 use (main() sets them itself if they are
// left out, as E1.java does). The work runs in a "main" virtual thread on
// that carrier; the platform main thread only starts it and waits.
//
// A Thread has no result, so each virtual thread writes its number (its
// index) to its own slot of an array made inside the timed part, as Go's
// peer does; main joins the threads in order (Thread.join, the join handle)
// and sums the slots. One untimed round runs first, so that the timed one
// finds the JIT's code and a warm heap, as Go's finds its free lists.
// Prints one line: "n=<int> ns=<int>" (ns = System.nanoTime() wall time of
// spawning and joining the N threads and summing).
public class Spawn {
    static void usage() {
        System.err.println("usage: Spawn <N>   (N a positive integer)");
        System.exit(2);
    }

    static long spawnJoin(int n) throws InterruptedException {
        long[] results = new long[n];
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            int k = i;
            threads[i] = Thread.ofVirtual().start(() -> results[k] = k);
        }
        long sum = 0;
        for (int i = 0; i < n; i++) {
            threads[i].join();
            sum += results[i];
        }
        return sum;
    }

    static String run(int n) throws InterruptedException {
        spawnJoin(n); // warm-up
        long t0 = System.nanoTime();
        long sum = spawnJoin(n);
        long elapsed = System.nanoTime() - t0;
        long want = (long) n * (n - 1) / 2;
        if (sum != want) throw new IllegalStateException("sum " + sum + " != " + want);
        return "n=" + n + " ns=" + elapsed;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].matches("[0-9]{1,9}")) usage();
        int n = Integer.parseInt(args[0]);
        if (n < 1) usage();
        if (System.getProperty("jdk.virtualThreadScheduler.parallelism") == null)
            System.setProperty("jdk.virtualThreadScheduler.parallelism", "1");
        if (System.getProperty("jdk.virtualThreadScheduler.maxPoolSize") == null)
            System.setProperty("jdk.virtualThreadScheduler.maxPoolSize", "1");

        String[] line = new String[1];
        Throwable[] failure = new Throwable[1];
        Thread main = Thread.ofVirtual().start(() -> {
            try {
                line[0] = run(n);
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
