package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthCommand is "gatehouse health [URL]": it asks URL (by default
// GET /health on GATEHOUSE_ADDR, an unspecified host read as loopback)
// and exits 0 when it answers 200, 1 otherwise; the check of a container
// image that has no shell or curl (Dockerfile HEALTHCHECK).
func healthCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 1 {
		fmt.Fprintln(stderr, "usage: gatehouse health [URL]")
		return 2
	}
	url := ""
	if len(args) == 1 {
		url = args[0]
	} else {
		addr := getenv("GATEHOUSE_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8080"
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			fmt.Fprintf(stderr, "gatehouse: health: GATEHOUSE_ADDR %q: %v\n", addr, err)
			return 2
		}
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		url = "http://" + net.JoinHostPort(host, port) + "/health"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: health: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: health: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "gatehouse: health: %s answered %d\n", url, resp.StatusCode)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
