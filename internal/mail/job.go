package mail

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/seal"
)

// Mail is sent by the job engine (internal/jobs): a store queues a Job in
// the transaction of the change that causes the message, so a rolled-back
// change mails nothing and a committed one is mailed even across a crash.

// MaxAttempts bounds the tries of one message; the waits between them are
// RetryDelays (docs/decisions.md).
const MaxAttempts = 10

// RetryDelays are the waits after each failed try: nine waits, about an
// hour from the first try to the last.
var RetryDelays = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute,
	8 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute}

// Job is a queued Message, the job's arguments: the message sealed under
// its own random ID, so the links it carries (sign-in, reset, invitation,
// signing) never sit readable in the job table.
type Job struct {
	ID     string `json:"id"`
	Sealed []byte `json:"sealed"`
}

// JobKind names mail in the job queue.
const JobKind = "mail"

// Kind names mail in the job queue.
func (Job) Kind() string { return JobKind }

// Sealer seals messages into Jobs and opens them again.
type Sealer struct {
	box   *seal.Box
	brand Brand
}

// NewSealer returns the Sealer of master (the server's encryption key).
func NewSealer(master []byte) (*Sealer, error) {
	box, err := seal.New(master, "mail")
	if err != nil {
		return nil, err
	}
	return &Sealer{box: box}, nil
}

// Branded is s ending every message of ours it seals with b's footer
// (Brand.Footer): the one place the footer is added.
func (s *Sealer) Branded(b Brand) *Sealer {
	v := *s
	v.brand = b
	return &v
}

// Seal returns m, ended with the brand's footer, as a Job.
func (s *Sealer) Seal(m Message) Job {
	plain, _ := json.Marshal(s.brand.sign(m)) // a struct of strings always marshals
	id := gatehouse.NewID()
	return Job{ID: id, Sealed: s.box.Seal(plain, jobContext(id))}
}

// Open returns the Message of j; an error when j was altered, or sealed
// under another key or for another job.
func (s *Sealer) Open(j Job) (Message, error) {
	var m Message
	plain, err := s.box.Open(j.Sealed, jobContext(j.ID))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(plain, &m); err != nil {
		return m, fmt.Errorf("queued mail: %w", err)
	}
	return m, nil
}

func jobContext(id string) []byte { return []byte("mail job " + id) }
