// E3 peer: IO-bound work under virtual threads. Needs Java 21+ (virtual
// threads). Only the `io` variant: the CPU variant's deflates are measured on
// runtimes whose threads run on every core.
//
// Run (single-file source launcher):
//   java -Djdk.virtualThreadScheduler.parallelism=1 \
//        -Djdk.virtualThreadScheduler.maxPoolSize=1 \
//        peers/java/E3.java io <ms> [<ms>...]
// The two properties give the virtual-thread scheduler one carrier thread,
// the one OS thread fibra's green threads and Go with GOMAXPROCS=1 use
// (main() sets them itself if they are left out, as E1.java does). The work
// runs in a "main" virtual thread on that carrier.
// Prints one line: "sequential_ns=<int> threaded_ns=<int>": the
// System.nanoTime() wall time of the sleeps (Thread.sleep) one after another,
// then of the same sleeps in a virtual thread each, all joined.
public class E3 {
    static void usage() {
        System.err.println("usage: E3 io <ms> [<ms>...]   (each a non-negative integer)");
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

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || !args[0].equals("io")) usage();
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
