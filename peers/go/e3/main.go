// E3 peer: IO-bound and CPU-bound work under goroutines.
//
// Build: go -C peers/go/e3 build -o /abs/OUT .
// Usage: OUT io <ms> [<ms>...], or OUT cpu <jobs> <bytes> goroutines.
// Prints one line: "sequential_ns=<int> threaded_ns=<int>": the monotonic
// wall time of the work one job after another, then of the same jobs in a
// goroutine each, joined with a sync.WaitGroup.
//
// io: each job sleeps (time.Sleep) the given milliseconds. Everything runs on
// one P (runtime.GOMAXPROCS(1)), like fibra's green threads on one OS thread.
// cpu: each job deflates (compress/zlib, default level) the same <bytes> of
// random hex text: the digits of xorshift32 outputs from seed 2463534242, each
// output written as 4 little-endian bytes, high nibble first (the same text
// fibra-bench and the Ruby peer deflate); <bytes> must be a multiple of 8.
// GOMAXPROCS is left at the number of cores.
package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: e3 io <ms> [<ms>...]   (each a non-negative integer)\n"+
		"       e3 cpu <jobs> <bytes> goroutines   (jobs >= 1, bytes a multiple of 8)")
	os.Exit(2)
}

// count parses a plain decimal integer of at most max.
func count(arg string, max int64) int64 {
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || arg[0] < '0' || arg[0] > '9' || n > max {
		usage()
	}
	return n
}

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	var sequential, threaded time.Duration
	switch os.Args[1] {
	case "io":
		sequential, threaded = io(os.Args[2:])
	case "cpu":
		sequential, threaded = cpu(os.Args[2:])
	default:
		usage()
	}
	fmt.Printf("sequential_ns=%d threaded_ns=%d\n", sequential.Nanoseconds(), threaded.Nanoseconds())
}

func io(args []string) (time.Duration, time.Duration) {
	var sleeps []time.Duration
	for _, arg := range args {
		sleeps = append(sleeps, time.Duration(count(arg, 1e9))*time.Millisecond)
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
	return sequential, time.Since(t0)
}

// randomHex is the text every runtime deflates (see the header).
func randomHex(n int) []byte {
	x := uint32(2463534242)
	raw := make([]byte, n/2)
	for i := 0; i < len(raw); i += 4 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		binary.LittleEndian.PutUint32(raw[i:], x)
	}
	text := make([]byte, n)
	hex.Encode(text, raw)
	return text
}

// deflatedLen is the length of text deflated by compress/zlib at the default level.
func deflatedLen(text []byte) int {
	var out bytes.Buffer
	out.Grow(len(text))
	w := zlib.NewWriter(&out)
	if _, err := w.Write(text); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return out.Len()
}

func cpu(args []string) (time.Duration, time.Duration) {
	if len(args) != 3 || args[2] != "goroutines" {
		usage()
	}
	jobs := int(count(args[0], 1e6))
	n := int(count(args[1], 1<<34))
	if jobs < 1 || n%8 != 0 {
		usage()
	}
	text := randomHex(n)
	lengths := make([]int, 2*jobs)

	t0 := time.Now()
	for i := 0; i < jobs; i++ {
		lengths[i] = deflatedLen(text)
	}
	sequential := time.Since(t0)

	t0 = time.Now()
	var wg sync.WaitGroup
	wg.Add(jobs)
	for i := 0; i < jobs; i++ {
		go func(i int) {
			lengths[jobs+i] = deflatedLen(text)
			wg.Done()
		}(i)
	}
	wg.Wait()
	threaded := time.Since(t0)

	for _, l := range lengths {
		if l != lengths[0] {
			fmt.Fprintln(os.Stderr, "deflates of the same input differ in length")
			os.Exit(1)
		}
	}
	return sequential, threaded
}
