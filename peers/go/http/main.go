// E4 and http-throughput peer: an HTTP server on Go's net/http, with the
// default GOMAXPROCS (all cores), as a Go user would run it. Each request is
// served by a goroutine of its own; HTTP/1.1 keep-alive and HTTP/1.0 close
// are net/http's.
//
// Build: go -C peers/go/http build -o /abs/OUT .
// Usage: OUT [--port N] [--fib N] [--sleep-ms MS] [--cert FILE --key FILE]
// Listens on 127.0.0.1:N (0, the default: any free port), prints one line
// "listening on 127.0.0.1:PORT" once it accepts connections, and serves until
// killed; HTTPS (crypto/tls, as ListenAndServeTLS serves it) when given a
// certificate chain and its key as PEM files:
//
//	GET /io      sleeps MS milliseconds (default 2000), answers "io\n"
//	GET /cpu     computes fib(N) (default 43) by naive double recursion,
//	             answers its value and "\n"
//	GET /io-cpu  both: sleeps, then computes, answers the value
//	GET /hello   answers "Hello, world!\n" at once
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// fib is the naive doubly recursive Fibonacci function: the CPU-bound work.
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	port := flag.Uint("port", 0, "port to listen on (0: any free port)")
	n := flag.Uint("fib", 43, "the Fibonacci number /cpu computes")
	sleepMs := flag.Uint("sleep-ms", 2000, "how long /io sleeps, in milliseconds")
	cert := flag.String("cert", "", "serve HTTPS with this certificate chain (PEM)")
	key := flag.String("key", "", "the certificate's private key (PEM)")
	flag.Parse()
	if flag.NArg() > 0 || *port > 65535 || (*cert == "") != (*key == "") {
		flag.Usage()
		os.Exit(2)
	}
	sleep := time.Duration(*sleepMs) * time.Millisecond
	compute := func(w http.ResponseWriter) {
		io.WriteString(w, strconv.Itoa(fib(int(*n)))+"\n")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/io", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(sleep)
		io.WriteString(w, "io\n")
	})
	mux.HandleFunc("/cpu", func(w http.ResponseWriter, _ *http.Request) {
		compute(w)
	})
	mux.HandleFunc("/io-cpu", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(sleep)
		compute(w)
	})
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "Hello, world!\n")
	})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "http:", err)
		os.Exit(1)
	}
	// os.Stdout is unbuffered: the line is out before the first Accept.
	fmt.Printf("listening on %s\n", ln.Addr())
	if *cert != "" {
		// ListenAndServeTLS is this on a listener of its own choosing.
		err = http.ServeTLS(ln, mux, *cert, *key)
	} else {
		err = http.Serve(ln, mux)
	}
	fmt.Fprintln(os.Stderr, "http:", err)
	os.Exit(1)
}
