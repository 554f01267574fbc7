// park-scale peer: N goroutines, each parked once, all alive at once.
//
// Build: go -C peers/go/park build -o /abs/OUT .
// Usage: OUT <N> <LIMIT_S>
// Creates N goroutines on one P (runtime.GOMAXPROCS(1), the one OS thread
// that fibra's green threads and tokio's current-thread runtime use), each
// blocked on one shared channel that is never written to (stopping early if
// creating takes more than LIMIT_S seconds), and waits until every one of
// them is blocked. Prints one line: "n=<N> created=<int> ns=<int>
// rss_before_kb=<int> rss_kb=<int>": the monotonic wall time from the first
// creation until every goroutine is blocked, VmRSS before the first one and
// VmRSS with all of them blocked, from /proc/self/status.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: park <N> <LIMIT_S>   (N >= 1, plain decimal integers)")
	os.Exit(2)
}

func count(arg string) int {
	n, err := strconv.Atoi(arg)
	if err != nil || arg[0] < '0' || arg[0] > '9' {
		usage()
	}
	return n
}

// statusKB reads a "kB" field of /proc/self/status, e.g. VmRSS.
func statusKB(key string) int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				panic(err)
			}
			return kb
		}
	}
	panic("no " + key + " in /proc/self/status")
}

func main() {
	if len(os.Args) != 3 {
		usage()
	}
	n := count(os.Args[1])
	limit := time.Duration(count(os.Args[2])) * time.Second
	if n < 1 {
		usage()
	}
	runtime.GOMAXPROCS(1)
	wake := make(chan struct{})
	var parked sync.WaitGroup
	before := statusKB("VmRSS")
	t0 := time.Now()
	created := 0
	for ; created < n; created++ {
		if created%1024 == 0 && time.Since(t0) > limit {
			fmt.Fprintf(os.Stderr, "the time limit of %d s\n", limit/time.Second)
			break
		}
		parked.Add(1)
		go func() {
			parked.Done()
			<-wake
		}()
	}
	// On one P, the goroutine that calls the last Done goes on to block in
	// its receive before this one runs again: Done does not yield.
	parked.Wait()
	elapsed := time.Since(t0)
	fmt.Printf("n=%d created=%d ns=%d rss_before_kb=%d rss_kb=%d\n",
		n, created, elapsed.Nanoseconds(), before, statusKB("VmRSS"))
}
