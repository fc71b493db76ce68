//go:build pprof

// Profiling for measurements only: built with -tags pprof (never by
// default), the binary serves net/http/pprof on GATEHOUSE_PPROF_ADDR, a
// loopback address, when that is set.
package main

import (
	"log"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("GATEHOUSE_PPROF_ADDR")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		log.Fatalf("GATEHOUSE_PPROF_ADDR %q: want a loopback HOST:PORT", addr)
	}
	go func() { log.Print(http.ListenAndServe(addr, nil)) }()
}
