// E1 peer: goroutine switch rate, Go's nearest equivalents of the two
// coroutine variants. Everything runs on one P (runtime.GOMAXPROCS(1)), so
// goroutines take turns on one OS thread like coroutines do.
//
// Build: go build -o OUT ./peers/go/e1   (from the repo root; no external deps)
// Usage: OUT <resume|transfer> <N>
// Prints one line: "switches=<int> ns=<int>" (ns = monotonic wall time of
// the timed loop only).
//
// resume: Go has no resume/yield, so runtime.Gosched() stands in for it. Two
// goroutines loop calling Gosched; the main goroutine loops N times calling
// Gosched twice. Gosched puts the caller at the tail of the run queue, so the
// three goroutines mostly run round-robin (main -> g1 -> g2 -> main): about 3
// switches per main Gosched, ~6*N in all, not the 4*N of real resume/yield.
// So the switches are counted, not assumed: each goroutine, whenever it runs
// again after Gosched, checks whether another goroutine ran in between (a
// shared "last runner" id) and if so counts one switch. A Gosched that hands
// control back to its own caller (the scheduler's every-61st-tick fairness
// check of the global run queue can do that) costs time but counts nothing.
// The count covers the timed loop exactly.
//
// transfer: two goroutines hand a counter to each other over unbuffered
// channels. The counter is the number of hand-overs made so far, *including*
// the first one (main -> g1) and the last one (a goroutine -> main), so
// exactly N hand-overs happen in all and switches = N (N >= 2). With one P
// each hand-over is one goroutine switch: the receiver is woken, the sender
// blocks on its own channel.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: e1 <resume|transfer> <N>   (N a positive integer; >= 2 for transfer)")
	os.Exit(2)
}

// ---- resume ----------------------------------------------------------------

var (
	last atomic.Int32 // id of the goroutine that ran most recently (0 = main)
	done atomic.Bool  // set by main when its timed loop is over
)

// arrive records that goroutine `me` is running now; it returns n+1 if
// another goroutine ran since `me` last did (a switch into `me`), else n.
func arrive(me int32, n int64) int64 {
	if last.Load() != me {
		last.Store(me)
		return n + 1
	}
	return n
}

// yielder is a helper goroutine: Gosched forever until main is done.
func yielder(me int32, out *int64, wg *sync.WaitGroup) {
	defer wg.Done()
	n := arrive(me, 0) // its first run is a switch too
	for {
		runtime.Gosched()
		if done.Load() { // main's timed loop is over: this run is not counted
			break
		}
		n = arrive(me, n)
	}
	*out = n // read by main after wg.Wait
}

func runResume(n int64) (switches int64, elapsed time.Duration) {
	var counts [2]int64
	var wg sync.WaitGroup
	wg.Add(2)
	go yielder(1, &counts[0], &wg)
	go yielder(2, &counts[1], &wg)

	var mine int64
	t0 := time.Now()
	for i := int64(0); i < n; i++ {
		runtime.Gosched()
		mine = arrive(0, mine)
		runtime.Gosched()
		mine = arrive(0, mine)
	}
	elapsed = time.Since(t0)

	done.Store(true)
	wg.Wait()
	return mine + counts[0] + counts[1], elapsed
}

// ---- transfer --------------------------------------------------------------

// passer receives the counter on `in`, counts the hand-over it is about to
// make, and sends it on to the peer, or to main if it is the N-th.
func passer(n int64, in <-chan int64, peer, main chan<- int64) {
	for count := range in {
		count++
		if count == n {
			main <- count
		} else {
			peer <- count
		}
	}
}

func runTransfer(n int64) (switches int64, elapsed time.Duration) {
	c1, c2, back := make(chan int64), make(chan int64), make(chan int64)
	go passer(n, c1, c2, back)
	go passer(n, c2, c1, back)
	runtime.Gosched() // let both goroutines start and block on their receive

	t0 := time.Now()
	c1 <- 1 // hand-over no. 1: main -> g1
	switches = <-back
	elapsed = time.Since(t0)
	if switches != n {
		fmt.Fprintf(os.Stderr, "count %d != N\n", switches)
		os.Exit(1)
	}
	return switches, elapsed // g1 and g2 stay blocked; they die with the process
}

func main() {
	if len(os.Args) != 3 {
		usage()
	}
	variant := os.Args[1]
	n, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil || os.Args[2][0] < '0' || os.Args[2][0] > '9' || n < 1 || n > 1e15 {
		usage()
	}
	runtime.GOMAXPROCS(1)

	var switches int64
	var elapsed time.Duration
	switch {
	case variant == "resume":
		switches, elapsed = runResume(n)
	case variant == "transfer" && n >= 2:
		switches, elapsed = runTransfer(n)
	default:
		usage()
	}
	fmt.Printf("switches=%d ns=%d\n", switches, elapsed.Nanoseconds())
}
