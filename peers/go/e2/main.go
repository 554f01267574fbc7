// E2 peer: the system calls behind a goroutine switch. Everything runs on one
// P (runtime.GOMAXPROCS(1)), so goroutines take turns on one OS thread like
// coroutines.
//
// Build: go -C peers/go/e2 build -o /abs/OUT .
// Usage: OUT <N>
// Prints one line: "switches=<int>", the exact number of hand-overs.
// Count the system calls with:  strace -f -c OUT <N>
//
// As peers/c/e2_swapcontext.c: two goroutines each push one element onto
// their own slice and pop it again, N times; after each push+pop a goroutine
// hands a counter to the other one over an unbuffered channel (with one P a
// hand-over is one goroutine switch: the receiver is woken, the sender blocks
// on its own channel). Main starts the first goroutine (1 hand-over), the
// goroutines then alternate (2*N - 1), and the second one's last hand-over
// goes back to main (1): 2*N + 1 in all. The counter handed along is the
// number of hand-overs so far. Main then checks that both finished ("joined")
// with empty slices.
//
// The Go runtime's other threads (sysmon, the GC's workers) make system calls
// of their own as time passes, so the count can grow a little with N even
// though a goroutine switch itself makes none.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: e2 <N>   (N a positive integer)")
	os.Exit(2)
}

// worker is goroutine k (0 or 1): it takes the counter on in[k], does its
// push+pop, counts the hand-over it is about to make, and makes it: to the
// other goroutine, or, for goroutine 1's last, to main.
func worker(k int, n int64, in [2]chan int64, main chan<- int64, done *[2]int64, lens *[2]int) {
	var array []int64
	for i := int64(0); i < n; i++ {
		count := <-in[k]
		array = append(array, i)
		top := array[len(array)-1]
		array = array[:len(array)-1]
		if top != i {
			panic("popped the wrong element")
		}
		done[k] = i + 1
		lens[k] = len(array)
		if k == 1 && i == n-1 {
			main <- count + 1
		} else {
			in[1-k] <- count + 1
		}
	}
}

func main() {
	if len(os.Args) != 2 {
		usage()
	}
	n, err := strconv.ParseInt(os.Args[1], 10, 64)
	if err != nil || os.Args[1][0] < '0' || os.Args[1][0] > '9' || n < 1 || n > 1e12 {
		usage()
	}
	runtime.GOMAXPROCS(1)

	in := [2]chan int64{make(chan int64), make(chan int64)}
	back := make(chan int64)
	var done [2]int64
	var lens [2]int
	go worker(0, n, in, back, &done, &lens)
	go worker(1, n, in, back, &done, &lens)
	in[0] <- 1 // hand-over no. 1: main -> goroutine 0
	switches := <-back

	// "Join": both goroutines ran all their iterations and left their slices
	// empty (the channel receive orders their writes before these reads).
	if done != [2]int64{n, n} || lens != [2]int{0, 0} || switches != 2*n+1 {
		fmt.Fprintln(os.Stderr, "goroutines did not finish cleanly")
		os.Exit(1)
	}
	fmt.Printf("switches=%d\n", switches)
}
