package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// fanout matches each created link with its link.created delivery.
type fanout struct {
	mu      sync.Mutex
	created map[string]time.Time // link id -> when its 200 was read
	hit     map[string]time.Time // link id -> when the receiver got it
	from    time.Time            // the window
	to      time.Time
	dupes   int
}

func newFanout() *fanout {
	return &fanout{created: map[string]time.Time{}, hit: map[string]time.Time{}}
}

// ServeHTTP is the HTTPS receiver: it records the link id of every
// link.created delivery and answers 200 at once.
func (f *fanout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		Event string `json:"event"`
		Data  struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) == nil && ev.Event == "link.created" && ev.Data.ID != "" {
		f.mu.Lock()
		if _, ok := f.hit[ev.Data.ID]; ok {
			f.dupes++
		} else {
			f.hit[ev.Data.ID] = now
		}
		f.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// onCreated records a link's 200.
func (f *fanout) onCreated(status int, body []byte) {
	now := time.Now()
	if status != http.StatusOK {
		return
	}
	var out struct {
		Link struct {
			ID string `json:"id"`
		} `json:"link"`
	}
	if json.Unmarshal(body, &out) != nil || out.Link.ID == "" {
		return
	}
	f.mu.Lock()
	f.created[out.Link.ID] = now
	f.mu.Unlock()
}

// delivered counts the created links whose delivery arrived.
func (f *fanout) delivered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for id := range f.created {
		if _, ok := f.hit[id]; ok {
			n++
		}
	}
	return n
}

// result fills r from the recorded times: deliveries that arrived in the
// window, and the latency of every delivered link.
func (f *fanout) result(r *jobRow) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := newHistogram()
	var last time.Time
	delivered := 0
	for id, c := range f.created {
		t, ok := f.hit[id]
		if !ok {
			r.Missing++
			continue
		}
		h.record(t.Sub(c)) // a delivery before the 200 was read counts as 0
		delivered++
		if t.After(last) {
			last = t
		}
		if !t.Before(f.from) && !t.After(f.to) {
			r.Done++
		}
	}
	r.DonePerSec = float64(r.Done) / r.Seconds
	if last.After(f.from) {
		r.SustainedPS = float64(delivered) / last.Sub(f.from).Seconds()
	}
	r.P50MS = ms(h.percentile(50))
	r.P99MS = ms(h.percentile(99))
}

// runFanout measures webhook fan-out: links created as fast as -c
// connections allow for -d, each with a link.created delivery to a local
// HTTPS receiver.
func (b *bench) runFanout(ctx context.Context, bin, db string) error {
	f := newFanout()
	var conns atomic.Int64
	recv := httptest.NewUnstartedServer(f)
	recv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	recv.StartTLS()
	defer recv.Close()
	caFile := filepath.Join(b.tmp, "receiver-ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		return err
	}
	js, stop, err := b.startJobServer(ctx, bin, db, "fanout", []string{
		"GATEHOUSE_WEBHOOK_CA_FILE=" + caFile, "GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true"})
	if err != nil {
		return err
	}
	defer stop()
	tok := js.user.session.AccessToken
	hook := map[string]any{"url": recv.URL + "/hook", "events": []string{"link.created"}}
	if err := callAs(ctx, js.client, http.MethodPost, js.url+"/links/v1/webhooks", tok, hook, nil); err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	link := []byte(`{"destinationUrl":"https://example.com/bench"}`)
	r := &runner{
		request: func(int) (*http.Request, error) {
			req, err := http.NewRequest(http.MethodPost, js.url+"/links/v1/links", bytes.NewReader(link))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			return req, nil
		},
		onResponse: func(_, status int, body []byte) { f.onCreated(status, body) },
	}
	f.from = time.Now()
	f.to = f.from.Add(b.cfg.duration)
	b.log.Printf("%s: fanout: %d connections creating links for %v", db, b.cfg.conns, b.cfg.duration)
	client := newClient(b.cfg.conns, b.cfg.timeout)
	res := runLoad(ctx, client, r, loadConfig{conns: b.cfg.conns, duration: b.cfg.duration, timeout: b.cfg.timeout, rate: b.cfg.jobsRate})
	client.CloseIdleConnections()
	f.mu.Lock()
	want := len(f.created)
	f.mu.Unlock()
	drain := waitArrived(ctx, f.delivered, want, time.Minute)
	row := jobRow{Job: "fanout", DB: db, Seconds: b.cfg.duration.Seconds(), Requests: res.requests - res.errors,
		Errors: res.errors, DrainSeconds: drain.Seconds()}
	row.RequestsPS = float64(row.Requests) / row.Seconds
	f.result(&row)
	row.ReceiverConns = int(conns.Load())
	if row.River, err = readJobTimings(ctx, js, "webhook.delivery"); err != nil {
		b.log.Printf("%s: fanout: River's job timings: %v", db, err)
	}
	b.addJob(row, js.srv)
	return js.srv.died()
}
