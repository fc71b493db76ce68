package jobs_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// slowSender takes a while over each mail and records how many it was
// sending at once.
type slowSender struct{ now, most, sent atomic.Int32 }

func (s *slowSender) Send(ctx context.Context, _ mail.Message) error {
	n := s.now.Add(1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(30 * time.Millisecond)
	s.now.Add(-1)
	s.sent.Add(1)
	return nil
}

// TestMailSendsBounded: with far more mail due than the engine has
// workers, no more than jobs.MaxMailSends are sent at once (one SMTP
// connection each; servers limit them per client).
func TestMailSendsBounded(t *testing.T) {
	sealer, err := mail.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	db := testenv.OpenDB(t, "sqlite").OnQueue("mailsends_" + testenv.RandomHex(4)).WithMail(sealer)
	const n = 200
	for i := range n {
		if err := db.Webhooks().QueueMail(context.Background(), mail.Message{To: fmt.Sprintf("m%d@example.com", i), Subject: "s", Text: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	s := &slowSender{}
	e, err := jobs.New(context.Background(), jobs.Config{DB: db, Mail: s, MailSealer: sealer, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer e.Stop(context.Background())
	for end := time.Now().Add(30 * time.Second); s.sent.Load() < n && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := s.sent.Load(); got != n {
		t.Fatalf("%d of %d mails sent in 30 s", got, n)
	}
	if most := s.most.Load(); most > jobs.MaxMailSends || most < 2 {
		t.Errorf("%d mails sent at once; want 2 to %d", most, jobs.MaxMailSends)
	}
}
