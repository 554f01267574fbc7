// Echo peer: TCP echo round trips over loopback. One server (an accept loop
// and a goroutine per connection that writes back what it reads) and C client
// connections, in one process with runtime.GOMAXPROCS(1). Each client makes R
// round trips: write a message of B bytes, read it back whole (io.ReadFull).
// The server copies with an explicit Read/Write loop and a 1 KiB buffer, as
// the Rust programs do (io.Copy between two TCPConns would use splice).
// TCP_NODELAY is on (Go's default, set explicitly by the Rust programs).
//
// Build: go -C peers/go/echo build -o /abs/OUT .
// Usage: OUT <C> <R> <B>
// Prints one line: "round_trips=<int> ns=<int> cpu_ns=<int>": C*R, the
// monotonic wall time of the round trips only, and the CPU time (user +
// system, getrusage(RUSAGE_SELF)) the process spent over them; the C
// connections are opened first, one after another, before the clocks start. Go raises its own soft limit on
// open files (Go >= 1.19), which needs 2*C of them.
package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: echo <connections> <round-trips> <bytes>   (positive integers)")
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "echo:", err)
	os.Exit(1)
}

func serve(conn net.Conn) {
	defer conn.Close()
	buf := make([]byte, 1024)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return // io.EOF: the client closed
		}
		if _, err := conn.Write(buf[:n]); err != nil {
			return
		}
	}
}

func client(conn net.Conn, fill byte, rounds, size int, wg *sync.WaitGroup, errs chan<- error) {
	defer wg.Done()
	defer conn.Close()
	message := bytes.Repeat([]byte{fill}, size)
	back := make([]byte, size)
	for r := 0; r < rounds; r++ {
		if _, err := conn.Write(message); err != nil {
			errs <- err
			return
		}
		if _, err := io.ReadFull(conn, back); err != nil {
			errs <- err
			return
		}
	}
	if !bytes.Equal(back, message) {
		errs <- fmt.Errorf("the echo differs from the message")
	}
}

// cpuTime is the CPU time (user + system) this process has used so far.
func cpuTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		fail(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

func arg(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || s[0] < '0' || s[0] > '9' || n < 1 || n > 1e9 {
		usage()
	}
	return n
}

func main() {
	if len(os.Args) != 4 {
		usage()
	}
	conns, rounds, size := arg(os.Args[1]), arg(os.Args[2]), arg(os.Args[3])
	runtime.GOMAXPROCS(1)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				fail(err)
			}
			go serve(conn)
		}
	}()
	clients := make([]net.Conn, conns)
	for i := range clients {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			fail(err)
		}
		conn.(*net.TCPConn).SetNoDelay(true)
		clients[i] = conn
	}

	errs := make(chan error, conns)
	var wg sync.WaitGroup
	wg.Add(conns)
	t0, cpu0 := time.Now(), cpuTime()
	for i, conn := range clients {
		go client(conn, byte(i), rounds, size, &wg, errs)
	}
	wg.Wait()
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	select {
	case err := <-errs:
		fail(err)
	default:
	}
	fmt.Printf("round_trips=%d ns=%d cpu_ns=%d\n", conns*rounds, elapsed.Nanoseconds(), cpu.Nanoseconds())
}
