// Command fakeprovider serves a JSON script (see package fakeprovider) on a
// loopback port and prints the URL on its first line of output. With -log it
// appends one JSON line per request (recorded body, status, the server's own
// time in nanoseconds). It runs until interrupted.
//
//	fakeprovider -script turns.json [-addr 127.0.0.1:0] [-log requests.jsonl]
//
// Point brig at it with --base-url URL (Anthropic) or URL/v1 (OpenAI).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"brig/test/fakeprovider"
)

func main() {
	script := flag.String("script", "", "JSON script file (required)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (keep it on loopback)")
	logPath := flag.String("log", "", "append one JSON line per request to this file")
	flag.Parse()
	if *script == "" {
		fmt.Fprintln(os.Stderr, "fakeprovider: -script is required")
		os.Exit(2)
	}
	s, err := fakeprovider.LoadScript(*script)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var opts []fakeprovider.Option
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeprovider:", err)
			os.Exit(1)
		}
		defer f.Close()
		var mu sync.Mutex
		enc := json.NewEncoder(f)
		opts = append(opts, fakeprovider.OnRequest(func(r fakeprovider.Request) {
			mu.Lock()
			defer mu.Unlock()
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(os.Stderr, "fakeprovider: log:", err)
			}
		}))
	}
	srv, err := fakeprovider.Listen(*addr, s, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(srv.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	_ = srv.Close()
}
