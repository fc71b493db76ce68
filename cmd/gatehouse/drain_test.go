package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// healthRequest is GET /health on a kept-alive HTTP/1.1 connection.
const healthRequest = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

// readAnswer reads one complete response from br.
func readAnswer(br *bufio.Reader) (*http.Response, error) {
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return nil, err
	}
	return res, nil
}

// roundTrip sends healthRequest on conn and reads its answer.
func roundTrip(conn net.Conn, br *bufio.Reader) (*http.Response, error) {
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, healthRequest); err != nil {
		return nil, err
	}
	return readAnswer(br)
}

// waitExit waits for srv to exit 0 no sooner than drain after signalled
// and within drain plus a margin.
func waitExit(t *testing.T, srv *serving, signalled time.Time, drain time.Duration) {
	t.Helper()
	const margin = 5 * time.Second
	select {
	case code := <-srv.done:
		if code != 0 {
			t.Errorf("exit %d; want 0; log:\n%s", code, srv.logs.String())
		}
	case <-time.After(time.Until(signalled.Add(drain + margin))):
		t.Fatalf("gatehouse serve still running %v after the signal (drain %v); log:\n%s", drain+margin, drain, srv.logs.String())
	}
	if took := time.Since(signalled); took < drain {
		t.Errorf("gatehouse serve exited %v after the signal; want it to keep serving for the %v drain", took, drain)
	}
}

// TestRunServeDrainWindow checks the shutdown drain step by step: once the
// signal has come, a request on a connection kept alive from before is
// answered, with "Connection: close", and a new connection is served too.
func TestRunServeDrainWindow(t *testing.T) {
	const drain = time.Second
	srv := startServe(t, map[string]string{"GATEHOUSE_SHUTDOWN_DRAIN": drain.String()})
	conn, err := net.Dial("tcp", "127.0.0.1:"+srv.port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	if res, err := roundTrip(conn, br); err != nil || res.StatusCode != 200 || res.Close {
		t.Fatalf("GET /health before the signal: %v, %+v; want 200 kept alive", err, res)
	}

	srv.cancel()
	signalled := time.Now()
	for !strings.Contains(srv.logs.String(), "shutting down: draining") {
		if time.Since(signalled) > 5*time.Second {
			t.Fatalf("no \"shutting down: draining\" line 5s after the signal; log:\n%s", srv.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := roundTrip(conn, br)
	if err != nil {
		t.Fatalf("GET /health on the kept-alive connection during the drain: %v; want an answer; log:\n%s", err, srv.logs.String())
	}
	if res.StatusCode != 200 || !res.Close {
		t.Errorf("GET /health during the drain: status %d, Connection %q; want 200 with Connection: close",
			res.StatusCode, res.Header.Get("Connection"))
	}
	fresh, err := net.Dial("tcp", "127.0.0.1:"+srv.port)
	if err != nil {
		t.Fatalf("a new connection during the drain: %v; want it accepted", err)
	}
	defer fresh.Close()
	if res, err := roundTrip(fresh, bufio.NewReader(fresh)); err != nil || res.StatusCode != 200 || !res.Close {
		t.Errorf("GET /health on a new connection during the drain: %v, %+v; want 200 with Connection: close", err, res)
	}
	waitExit(t, srv, signalled, drain)
}

// TestRunServeDrainUnderLoad checks the shutdown drain under load (issue
// 12, 6b): kept-alive clients send requests in a loop while the server is
// told to stop, and every request written before the signal gets a
// complete answer, none an EOF or a reset.
func TestRunServeDrainUnderLoad(t *testing.T) {
	const drain, clients = time.Second, 16
	srv := startServe(t, map[string]string{"GATEHOUSE_SHUTDOWN_DRAIN": drain.String()})
	var signalled atomic.Bool
	var answered atomic.Int64
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	started := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- keepSending(srv.port, &signalled, &answered)
		}()
	}
	for answered.Load() < 100 { // every client is busy
		if time.Since(started) > 15*time.Second {
			t.Fatalf("%d answers in 15s; want 100 before the signal", answered.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	signalled.Store(true)
	before := answered.Load()
	srv.cancel()
	start := time.Now()
	waitExit(t, srv, start, drain)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d answers before the signal, %d after", before, answered.Load()-before)
}

// keepSending sends healthRequest on a kept-alive connection in a loop, on
// a new one whenever the server closes it, until it cannot connect after
// the signal. Its error is about a request written before the signal that
// got no complete answer.
func keepSending(port string, signalled *atomic.Bool, answered *atomic.Int64) error {
	for {
		conn, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			if signalled.Load() {
				return nil
			}
			return fmt.Errorf("connect before the signal: %w", err)
		}
		err = sendUntilClosed(conn, signalled, answered)
		conn.Close()
		if err != nil {
			return err
		}
	}
}

// sendUntilClosed sends requests on conn one after another until the
// server closes it or a request goes unanswered.
func sendUntilClosed(conn net.Conn, signalled *atomic.Bool, answered *atomic.Int64) error {
	br := bufio.NewReader(conn)
	for {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err := io.WriteString(conn, healthRequest)
		written := !signalled.Load() // sent before the signal
		var res *http.Response
		if err == nil {
			res, err = readAnswer(br)
		}
		if err != nil {
			if written {
				return fmt.Errorf("a request written before the signal got no answer: %w", err)
			}
			return nil
		}
		answered.Add(1)
		if res.Close {
			return nil
		}
	}
}

// TestShutdownDrainSetting checks GATEHOUSE_SHUTDOWN_DRAIN: 3s by default,
// any duration of 0 or more otherwise.
func TestShutdownDrainSetting(t *testing.T) {
	for raw, want := range map[string]time.Duration{"": 3 * time.Second, "0": 0, "250ms": 250 * time.Millisecond, "1m": time.Minute} {
		c, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_SHUTDOWN_DRAIN": raw}))
		if err != nil || c.ShutdownDrain != want {
			t.Errorf("GATEHOUSE_SHUTDOWN_DRAIN=%q: %v, err %v; want %v", raw, c.ShutdownDrain, err, want)
		}
	}
}
