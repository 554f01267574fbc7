// ractor-pingpong peer: message round trips between two goroutines over
// unbuffered channels, with GOMAXPROCS=2 (two OS threads may run them).
//
// Build: go -C peers/go/pingpong build -o /abs/OUT .
// Usage: OUT <N>
// Prints one line: "round_trips=<N> ns=<int>": the monotonic wall time of N
// round trips, each a number sent from the main goroutine to the other and
// sent back plus one. An untimed round of N/10 round trips comes first.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pingpong <N>   (N >= 1, a plain decimal integer)")
	os.Exit(2)
}

// play makes n round trips and returns the last number back.
func play(ping chan<- int, pong <-chan int, n int) int {
	ball := 0
	for i := 0; i < n; i++ {
		ping <- ball
		ball = <-pong
	}
	return ball
}

func main() {
	if len(os.Args) != 2 {
		usage()
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 || os.Args[1][0] < '0' || os.Args[1][0] > '9' {
		usage()
	}
	runtime.GOMAXPROCS(2)
	ping := make(chan int)
	pong := make(chan int)
	go func() {
		for ball := range ping {
			pong <- ball + 1
		}
	}()
	play(ping, pong, n/10)
	t0 := time.Now()
	last := play(ping, pong, n)
	elapsed := time.Since(t0)
	close(ping)
	if last != n {
		fmt.Fprintf(os.Stderr, "the last ball came back as %d, not %d\n", last, n)
		os.Exit(1)
	}
	fmt.Printf("round_trips=%d ns=%d\n", n, elapsed.Nanoseconds())
}
