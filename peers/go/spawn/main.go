// Spawn+join peer: spawn N goroutines that each return a number, join them
// all and sum. Everything runs on one P (runtime.GOMAXPROCS(1)), a like-for-
// like single-thread figure against fibra's green threads and tokio's
// current-thread runtime.
//
// Goroutines have no join handle; the idiomatic "spawn N, collect results" is
// used: each goroutine writes its number to its own slot of a slice, and a
// sync.WaitGroup joins them all. The slice is made inside the timed part, as
// the handles' vector is in the Rust programs.
//
// Build: go -C peers/go/spawn build -o /abs/OUT .
// Usage: OUT <N>
// Prints one line: "n=<int> ns=<int>" (ns = monotonic wall time of spawning
// and joining the N goroutines and summing). One untimed round runs first,
// so that the timed one finds the heap and the goroutine free lists warm.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: spawn <N>   (N a positive integer)")
	os.Exit(2)
}

func spawnJoin(n int) (sum int64) {
	results := make([]int64, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			results[i] = int64(i)
			wg.Done()
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		sum += r
	}
	return sum
}

func main() {
	if len(os.Args) != 2 {
		usage()
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || os.Args[1][0] < '0' || os.Args[1][0] > '9' || n < 1 || n > 1e9 {
		usage()
	}
	runtime.GOMAXPROCS(1)

	spawnJoin(n) // warm-up
	t0 := time.Now()
	sum := spawnJoin(n)
	elapsed := time.Since(t0)
	if want := int64(n) * int64(n-1) / 2; sum != want {
		fmt.Fprintf(os.Stderr, "sum %d != %d\n", sum, want)
		os.Exit(1)
	}
	fmt.Printf("n=%d ns=%d\n", n, elapsed.Nanoseconds())
}
