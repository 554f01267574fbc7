// ractor-fanin peer: N goroutines sending to one receiver over one channel.
//
// Build: go -C peers/go/fanin build -o /abs/OUT .
// Usage: OUT <N> <M>
// Creates N sender goroutines, each waiting for the start (a closed channel);
// then starts the clock, starts them all, and each sends M/N numbers (0, 1,
// ...) on one channel buffered 4,096 deep (Go has no unbounded channel; the
// buffer lets senders run ahead, as a mailbox does), which the main goroutine
// receives and sums. GOMAXPROCS is left at the number of cores.
// Prints one line: "senders=<N> messages=<int> ns=<int>": the messages
// received (N*(M/N)) and the monotonic wall time from the start to the last
// message received.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: fanin <N> <M>   (1 <= N <= M, plain decimal integers)")
	os.Exit(2)
}

func count(arg string) int {
	n, err := strconv.Atoi(arg)
	if err != nil || arg[0] < '0' || arg[0] > '9' || n < 1 {
		usage()
	}
	return n
}

func main() {
	if len(os.Args) != 3 {
		usage()
	}
	n, m := count(os.Args[1]), count(os.Args[2])
	if n > m {
		usage()
	}
	each := m / n
	start := make(chan struct{})
	inbox := make(chan int, 4096)
	for s := 0; s < n; s++ {
		go func() {
			<-start
			for i := 0; i < each; i++ {
				inbox <- i
			}
		}()
	}
	t0 := time.Now()
	close(start)
	sum := 0
	for k := 0; k < n*each; k++ {
		sum += <-inbox
	}
	elapsed := time.Since(t0)
	if sum != n*(each*(each-1)/2) {
		fmt.Fprintf(os.Stderr, "the messages add up to %d\n", sum)
		os.Exit(1)
	}
	fmt.Printf("senders=%d messages=%d ns=%d\n", n, n*each, elapsed.Nanoseconds())
}
