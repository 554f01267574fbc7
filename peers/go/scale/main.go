// ractor-scale peer: N goroutines that each wait for one message.
//
// Build: go -C peers/go/scale build -o /abs/OUT .
// Usage: OUT <N> <LIMIT_S>
// Creates N goroutines, each blocked on a channel of its own (stopping early
// if creating takes more than LIMIT_S seconds), waits until every one has
// started and the memory has settled, sends each its number, and collects
// every reply (the number plus one) from one shared channel. GOMAXPROCS is
// left at the number of cores. Prints one line: "n=<N> created=<int> ns=<int>
// rss_before_kb=<int> idle_kb=<int> peak_kb=<int>": the monotonic wall time of
// all of it but the settle, VmRSS before the first goroutine, VmRSS with all
// waiting once settled (read every 10 ms until 10 reads in a row find no new
// low, at most 5 s: the same in every ractor-scale program), and VmHWM (peak
// RSS) at the end, from /proc/self/status.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: scale <N> <LIMIT_S>   (N >= 1, plain decimal integers)")
	os.Exit(2)
}

func count(arg string) int {
	n, err := strconv.Atoi(arg)
	if err != nil || arg[0] < '0' || arg[0] > '9' {
		usage()
	}
	return n
}

// statusKB reads a "kB" field of /proc/self/status, e.g. VmHWM.
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

// settledKB is VmRSS once it has stopped falling: read every 10 ms until 10
// reads in a row find no new low (at most 5 s), the last read.
func settledKB() int {
	start := time.Now()
	last := statusKB("VmRSS")
	low, steady := last, 0
	for steady < 10 && time.Since(start) < 5*time.Second {
		time.Sleep(10 * time.Millisecond)
		last = statusKB("VmRSS")
		if last < low {
			low, steady = last, 0
		} else {
			steady++
		}
	}
	return last
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
	before := statusKB("VmRSS")
	t0 := time.Now()
	replies := make(chan int)
	chans := make([]chan int, 0, n)
	var waiting sync.WaitGroup
	for i := 0; i < n; i++ {
		if i%1024 == 0 && time.Since(t0) > limit {
			fmt.Fprintf(os.Stderr, "the time limit of %d s\n", limit/time.Second)
			break
		}
		ch := make(chan int)
		chans = append(chans, ch)
		waiting.Add(1)
		go func() {
			waiting.Done()
			replies <- <-ch + 1
		}()
	}
	waiting.Wait()
	// Every goroutine alive and waiting: the idle figure, off the clock.
	creating := time.Since(t0)
	idle := settledKB()
	messaging := time.Now()
	for i, ch := range chans {
		ch <- i
	}
	sum := 0
	for range chans {
		sum += <-replies
	}
	elapsed := creating + time.Since(messaging)
	created := len(chans)
	if sum != created*(created+1)/2 {
		fmt.Fprintf(os.Stderr, "the replies add up to %d\n", sum)
		os.Exit(1)
	}
	fmt.Printf("n=%d created=%d ns=%d rss_before_kb=%d idle_kb=%d peak_kb=%d\n",
		n, created, elapsed.Nanoseconds(), before, idle, statusKB("VmHWM"))
}
