// ractor-pingpong peer: message round trips between two goroutines over
// unbuffered channels, with GOMAXPROCS=2 (two OS threads may run them).
//
// Build: go -C peers/go/pingpong build -o /abs/OUT .
// Usage: OUT <N>
// Prints one line: "round_trips=<N> ns=<int> p50_ns=<int> p99_ns=<int>": the
// monotonic wall time of N round trips, each a number sent from the main
// goroutine to the other and sent back plus one, and the median and 99th
// percentile of every 16th round trip, timed alone. An untimed round of N/10
// round trips comes first.
package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// One round trip in this many is timed alone, for the percentiles.
const sampleEvery = 16

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pingpong <N>   (N >= 1, a plain decimal integer)")
	os.Exit(2)
}

// play makes n round trips and returns the last number back and the times
// of the sampled ones.
func play(ping chan<- int, pong <-chan int, n int) (int, []int64) {
	ball := 0
	samples := make([]int64, 0, n/sampleEvery+1)
	for i := 0; i < n; i++ {
		if i%sampleEvery == 0 {
			t0 := time.Now()
			ping <- ball
			ball = <-pong
			samples = append(samples, time.Since(t0).Nanoseconds())
		} else {
			ping <- ball
			ball = <-pong
		}
	}
	return ball, samples
}

// percentile is the nearest-rank percentile p of sorted (0 when empty).
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := max(1, (p*len(sorted)+99)/100)
	return sorted[rank-1]
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
	last, samples := play(ping, pong, n)
	elapsed := time.Since(t0)
	close(ping)
	if last != n {
		fmt.Fprintf(os.Stderr, "the last ball came back as %d, not %d\n", last, n)
		os.Exit(1)
	}
	slices.Sort(samples)
	fmt.Printf("round_trips=%d ns=%d p50_ns=%d p99_ns=%d\n", n, elapsed.Nanoseconds(),
		percentile(samples, 50), percentile(samples, 99))
}
