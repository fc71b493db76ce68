package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"
)

// mailSink is an SMTP server on loopback that accepts every message and
// keeps only when each arrived.
type mailSink struct {
	mu      sync.Mutex
	arrived []time.Time
	// to is when the first message to each recipient arrived (starve).
	to   map[string]time.Time
	srv  *smtp.Server
	addr string
}

func startMailSink() (*mailSink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &mailSink{addr: l.Addr().String(), to: map[string]time.Time{}}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{sink: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout = 10 * time.Second
	s.srv.WriteTimeout = 10 * time.Second
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	go s.srv.Serve(l)
	return s, nil
}

func (s *mailSink) close() { s.srv.Close() }

func (s *mailSink) url() string { return "smtp://" + s.addr }

func (s *mailSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.arrived)
}

// last is when the last message arrived.
func (s *mailSink) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.arrived) == 0 {
		return time.Time{}
	}
	return s.arrived[len(s.arrived)-1]
}

// arrivedAt is when the first message to addr arrived.
func (s *mailSink) arrivedAt(addr string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.to[addr]
	return t, ok
}

// arrivedOf counts the addresses of want that got a message.
func (s *mailSink) arrivedOf(want map[string]time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for addr := range want {
		if _, ok := s.to[addr]; ok {
			n++
		}
	}
	return n
}

// between counts the messages that arrived in [from, to].
func (s *mailSink) between(from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.arrived {
		if !t.Before(from) && !t.After(to) {
			n++
		}
	}
	return n
}

type sinkSession struct {
	sink *mailSink
	rcpt []string
}

func (*sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (*sinkSession) Logout() error                        { return nil }

func (c *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	c.rcpt = append(c.rcpt, to)
	return nil
}

func (c *sinkSession) Reset() { c.rcpt = nil }

func (c *sinkSession) Data(r io.Reader) error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	now := time.Now()
	c.sink.mu.Lock()
	c.sink.arrived = append(c.sink.arrived, now)
	for _, to := range c.rcpt {
		if _, ok := c.sink.to[to]; !ok {
			c.sink.to[to] = now
		}
	}
	c.sink.mu.Unlock()
	return nil
}

// runMail measures registrations (each queues a confirmation mail) for -d
// twice: with mail written to the log, then sent to an SMTP sink, and how
// fast the sink accepts the mails.
func (b *bench) runMail(ctx context.Context, bin, db string) error {
	if err := b.runMailOnce(ctx, bin, db, nil, registrations); err != nil {
		return err
	}
	sink, err := startMailSink()
	if err != nil {
		return err
	}
	defer sink.close()
	return b.runMailOnce(ctx, bin, db, sink, registrations)
}

// runMagicMail measures the mail sender alone: sign-in links asked for
// fresh addresses (each once; with the rate limit off, as every bench
// server runs, no per-IP or per-address limit refuses them) queue one
// mail each without hashing a password, so the sink sees how fast mail
// leaves, not how fast passwords hash.
func (b *bench) runMagicMail(ctx context.Context, bin, db string) error {
	sink, err := startMailSink()
	if err != nil {
		return err
	}
	defer sink.close()
	return b.runMailOnce(ctx, bin, db, sink, magicLinks)
}

// mailLoad is what queues the mail of a mail measurement.
type mailLoad struct {
	name, what, path string
	body             func(run string, n uint64) string
}

var (
	registrations = mailLoad{name: "mail", what: "registering", path: "/v1/auth/register",
		body: func(run string, n uint64) string {
			return fmt.Sprintf(`{"email":"mail-%s-%d@example.com","password":"pw-bench-registration","name":"Bench"}`, run, n)
		}}
	magicLinks = mailLoad{name: "magic", what: "asking sign-in links", path: "/v1/auth/magic-link",
		body: func(run string, n uint64) string { return fmt.Sprintf(`{"email":"magic-%s-%d@example.com"}`, run, n) }}
)

// runMailOnce starts gatehouse, with SMTP to sink unless it is nil, and
// sends load's requests on -c connections for -d.
func (b *bench) runMailOnce(ctx context.Context, bin, db string, sink *mailSink, load mailLoad) error {
	name, extra := load.name+" (log)", []string(nil)
	if sink != nil {
		name, extra = load.name+" (smtp)", []string{"GATEHOUSE_SMTP_URL=" + sink.url()}
	}
	js, stop, err := b.startJobServer(ctx, bin, db, strings.NewReplacer(" ", "", "(", "-", ")", "").Replace(name), extra)
	if err != nil {
		return err
	}
	defer stop()
	if sink != nil { // the bench user's own mail
		waitArrived(ctx, sink.count, 1, 30*time.Second)
	}
	run := randomHex(4)
	var n atomic.Uint64
	r := &runner{request: func(int) (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, js.url+load.path, strings.NewReader(load.body(run, n.Add(1))))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		return req, nil
	}}
	b.log.Printf("%s: %s: %d connections %s for %v", db, name, b.cfg.conns, load.what, b.cfg.duration)
	from := time.Now()
	client := newClient(b.cfg.conns, b.cfg.timeout)
	res := runLoad(ctx, client, r, loadConfig{conns: b.cfg.conns, duration: b.cfg.duration, timeout: b.cfg.timeout, rate: b.cfg.jobsRate})
	client.CloseIdleConnections()
	to := from.Add(b.cfg.duration)
	row := jobRow{Job: name, DB: db, Seconds: b.cfg.duration.Seconds(), Requests: res.requests - res.errors, Errors: res.errors}
	row.RequestsPS = float64(row.Requests) / row.Seconds
	if sink != nil {
		// Every request that answered, in the window or late, plus
		// the bench user's.
		want := int(res.requests-res.errors+res.late-res.lateErrors) + 1
		row.DrainSeconds = waitArrived(ctx, sink.count, want, time.Minute).Seconds()
		row.Done = sink.between(from, to)
		row.DonePerSec = float64(row.Done) / row.Seconds
		row.Missing = max(0, want-sink.count())
		if last := sink.last(); last.After(from) {
			row.SustainedPS = float64(sink.count()-1) / last.Sub(from).Seconds()
		}
	}
	b.addJob(row, js.srv)
	return js.srv.died()
}
