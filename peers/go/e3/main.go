// E3 peer: IO-bound work under goroutines. Everything runs on one P
// (runtime.GOMAXPROCS(1)), like fibra's green threads on one OS thread.
//
// Build: go -C peers/go/e3 build -o /abs/OUT .
// Usage: OUT io <ms> [<ms>...]
// Prints one line: "sequential_ns=<int> threaded_ns=<int>": the monotonic
// wall time of the sleeps one after another (time.Sleep), then of the same
// sleeps in a goroutine each, joined with a sync.WaitGroup.
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
	fmt.Fprintln(os.Stderr, "usage: e3 io <ms> [<ms>...]   (each a non-negative integer)")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 3 || os.Args[1] != "io" {
		usage()
	}
	var sleeps []time.Duration
	for _, arg := range os.Args[2:] {
		ms, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || arg[0] < '0' || arg[0] > '9' || ms > 1e9 {
			usage()
		}
		sleeps = append(sleeps, time.Duration(ms)*time.Millisecond)
	}
	runtime.GOMAXPROCS(1)

	t0 := time.Now()
	for _, d := range sleeps {
		time.Sleep(d)
	}
	sequential := time.Since(t0)

	t0 = time.Now()
	var wg sync.WaitGroup
	wg.Add(len(sleeps))
	for _, d := range sleeps {
		go func(d time.Duration) {
			time.Sleep(d)
			wg.Done()
		}(d)
	}
	wg.Wait()
	threaded := time.Since(t0)

	fmt.Printf("sequential_ns=%d threaded_ns=%d\n", sequential.Nanoseconds(), threaded.Nanoseconds())
}
