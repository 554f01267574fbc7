// E1 peer: virtual-thread switch rate, Java's nearest equivalents of the two
// coroutine variants. Needs Java 21+ (virtual threads); Java 17 cannot run it.
//
// Run (single-file source launcher, Java 21+):
//   java -Djdk.virtualThreadScheduler.parallelism=1 \
//        -Djdk.virtualThreadScheduler.maxPoolSize=1 \
//        peers/java/E1.java <resume|transfer> <N>
// The two properties make the virtual-thread scheduler use one carrier
// thread, so virtual threads take turns on one OS thread like coroutines. If
// the caller leaves them out, main() sets them itself before the first
// virtual thread is created (the scheduler reads them then), but passing them
// is the documented way.
// Prints one line: "switches=<int> ns=<int>" (ns = System.nanoTime() wall
// time of the timed loop only; it includes JIT warm-up, the JVM start and
// source compilation do not count).
//
// All the work runs in a "main" virtual thread, on the same carrier as the
// others; the platform main thread only starts it and waits.
//
// resume: Java has no resume/yield, so Thread.yield() stands in for it. Two
// virtual threads loop calling Thread.yield(); the main virtual thread loops
// N times yielding twice. A yielding virtual thread goes to the back of the
// carrier's queue, so the three mostly run round-robin (main -> y1 -> y2 ->
// main): about 3 switches per main yield, ~6*N in all, not the 4*N of real
// resume/yield. So the switches are counted, not assumed: each virtual
// thread, whenever it runs again after yield(), checks whether another one
// ran in between (a shared "last runner" id) and if so counts one switch. A
// yield that resumes its own caller costs time but counts nothing. The count
// covers the timed loop exactly.
//
// transfer: two virtual threads hand a counter to each other directly: the
// sender stores it in the receiver's volatile mailbox and unparks it, then
// parks until its own mailbox is filled (LockSupport park/unpark, the closest
// thing to a direct hand-off). The counter is the number of hand-overs made
// so far, *including* the first one (main -> t1) and the last one (a thread
// -> main), so exactly N hand-overs happen in all and switches = N (N >= 2).
import java.util.concurrent.locks.LockSupport;

public class E1 {
    static void usage() {
        System.err.println("usage: E1 <resume|transfer> <N>   (N a positive integer; >= 2 for transfer)");
        System.exit(2);
    }

    // ---- resume -------------------------------------------------------------

    static volatile int last;     // id of the virtual thread that ran most recently (0 = main)
    static volatile boolean done; // set by main when its timed loop is over

    // Records that thread `me` is running now; returns n+1 if another thread
    // ran since `me` last did (a switch into `me`), else n.
    static long arrive(int me, long n) {
        if (last != me) {
            last = me;
            return n + 1;
        }
        return n;
    }

    // A helper: yield until main is done; its count is read after join().
    static final class Yielder implements Runnable {
        final int me;
        long count;
        Yielder(int me) { this.me = me; }
        public void run() {
            long n = arrive(me, 0); // its first run is a switch too
            for (;;) {
                Thread.yield();
                if (done) break; // main's timed loop is over: not counted
                n = arrive(me, n);
            }
            count = n;
        }
    }

    static long[] runResume(long n) throws InterruptedException {
        Yielder y1 = new Yielder(1), y2 = new Yielder(2);
        Thread t1 = Thread.ofVirtual().start(y1);
        Thread t2 = Thread.ofVirtual().start(y2);
        long mine = 0;
        long t0 = System.nanoTime();
        for (long i = 0; i < n; i++) {
            Thread.yield();
            mine = arrive(0, mine);
            Thread.yield();
            mine = arrive(0, mine);
        }
        long elapsed = System.nanoTime() - t0;
        done = true;
        t1.join();
        t2.join();
        return new long[] {mine + y1.count + y2.count, elapsed};
    }

    // ---- transfer -----------------------------------------------------------

    // One party of the hand-over: a thread and its mailbox (0 = empty).
    static final class Party {
        volatile Thread thread;
        volatile long box;

        // Waits for the counter to arrive, takes it, and empties the box.
        long await() {
            long v;
            while ((v = box) == 0) LockSupport.park(); // loop: park may return spuriously
            box = 0;
            return v;
        }

        // Hands the counter to this party.
        void give(long v) {
            box = v;
            LockSupport.unpark(thread);
        }
    }

    static long[] runTransfer(long n) throws InterruptedException {
        Party main = new Party(), p1 = new Party(), p2 = new Party();
        main.thread = Thread.currentThread();
        p1.thread = Thread.ofVirtual().unstarted(() -> pass(n, p1, p2, main));
        p2.thread = Thread.ofVirtual().unstarted(() -> pass(n, p2, p1, main));
        p1.thread.start();
        p2.thread.start();
        Thread.yield(); // let both start and park on their empty boxes

        long t0 = System.nanoTime();
        p1.give(1); // hand-over no. 1: main -> t1
        long count = main.await();
        long elapsed = System.nanoTime() - t0;
        if (count != n) throw new IllegalStateException("count " + count + " != N");
        // t1 and t2 stay parked; virtual threads are daemons and die at exit.
        return new long[] {count, elapsed};
    }

    // Takes the counter, counts the hand-over it is about to make, and makes
    // it: to the peer, or to main if it is the N-th.
    static void pass(long n, Party self, Party peer, Party main) {
        for (;;) {
            long count = self.await() + 1;
            (count == n ? main : peer).give(count);
        }
    }

    // ---- main ---------------------------------------------------------------

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[1].matches("[0-9]{1,15}")) usage();
        String variant = args[0];
        long n = Long.parseLong(args[1]);
        boolean transfer = variant.equals("transfer");
        if (!transfer && !variant.equals("resume")) usage();
        if (n < 1 || (transfer && n < 2)) usage();

        // Defaults for the one-carrier scheduler, if the caller did not pass them.
        if (System.getProperty("jdk.virtualThreadScheduler.parallelism") == null)
            System.setProperty("jdk.virtualThreadScheduler.parallelism", "1");
        if (System.getProperty("jdk.virtualThreadScheduler.maxPoolSize") == null)
            System.setProperty("jdk.virtualThreadScheduler.maxPoolSize", "1");

        long[][] result = new long[1][];
        Throwable[] failure = new Throwable[1];
        Thread runner = Thread.ofVirtual().start(() -> {
            try {
                result[0] = transfer ? runTransfer(n) : runResume(n);
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        runner.join();
        if (failure[0] != null) {
            failure[0].printStackTrace();
            System.exit(1);
        }
        System.out.println("switches=" + result[0][0] + " ns=" + result[0][1]);
    }
}
