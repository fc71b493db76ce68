package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/smtp"
	"strings"
	"testing"
	"time"
)

func TestJobsFlag(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.jobs) != 0 {
		t.Errorf("default run has jobs %v", c.jobs)
	}
	c, err = parseFlags([]string{"-targets", "", "-jobs", "fanout,mail,magic"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.wantsJob("fanout") || !c.wantsJob("mail") || !c.wantsJob("magic") || c.wantsGatehouse() {
		t.Errorf("-targets '' -jobs fanout,mail: jobs %v, targets %v", c.jobs, c.targets)
	}
	for _, args := range [][]string{
		{"-jobs", "fanoot"},
		{"-jobs", "fanout", "-url", "http://127.0.0.1:8080"},
		{"-targets", ""},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestFanoutMatch: deliveries are matched to links by id, in either
// order, a duplicate delivery counts once, and an undelivered link is
// reported missing.
func TestFanoutMatch(t *testing.T) {
	f := newFanout()
	f.from = time.Now()
	f.to = f.from.Add(time.Hour)
	deliver := func(id string) {
		body := `{"event":"link.created","at":"x","data":{"id":"` + id + `"}}`
		f.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body)))
	}
	deliver("early") // before its 200 was read
	f.onCreated(200, []byte(`{"link":{"id":"early"}}`))
	f.onCreated(200, []byte(`{"link":{"id":"late"}}`))
	f.onCreated(200, []byte(`{"link":{"id":"lost"}}`))
	f.onCreated(500, []byte(`{"link":{"id":"failed"}}`))
	time.Sleep(2 * time.Millisecond)
	deliver("late")
	deliver("late")
	if got := f.delivered(); got != 2 {
		t.Errorf("delivered = %d, want 2", got)
	}
	r := jobRow{Seconds: 1}
	f.result(&r)
	if r.Done != 2 || r.Missing != 1 || f.dupes != 1 || r.P99MS < 1 {
		t.Errorf("done %d, missing %d, dupes %d, p99 %v ms; want 2, 1, 1, ≥ 1", r.Done, r.Missing, f.dupes, r.P99MS)
	}
}

func TestMailSink(t *testing.T) {
	s, err := startMailSink()
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	from := time.Now()
	for range 3 {
		msg := []byte("Subject: hi\r\n\r\nbody\r\n")
		if err := smtp.SendMail(strings.TrimPrefix(s.url(), "smtp://"), nil, "a@example.com", []string{"b@example.com"}, msg); err != nil {
			t.Fatal(err)
		}
	}
	if s.count() != 3 || s.between(from, time.Now()) != 3 || s.between(time.Now().Add(time.Second), time.Now().Add(time.Hour)) != 0 {
		t.Errorf("count %d, between %d", s.count(), s.between(from, time.Now()))
	}
}
