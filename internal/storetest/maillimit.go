package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/maillimit"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
)

// testMailLedger checks the record the mail limits count: rows of their
// kind, workspace or sender, after Since; MailAt by age, ErrNotFound past
// the last; nothing recorded by a transaction that rolls back; and rows
// older than two days pruned as the workspace records new ones.
func testMailLedger(t *testing.T, s Stores) {
	ctx := context.Background()
	org, other, sender := newID(), newID(), newID()
	t0 := now()
	record := func(kind, orgID, senderID string, at time.Time, n int) {
		t.Helper()
		if err := s.Forms.RecordMail(ctx, kind, orgID, senderID, at, n); err != nil {
			t.Fatal(err)
		}
	}
	count := func(f maillimit.Filter) int {
		t.Helper()
		n, err := s.Forms.CountMail(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	record(maillimit.Sign, org, sender, t0, 2)
	record(maillimit.Sign, org, "", t0.Add(time.Minute), 1)
	record(maillimit.Sign, other, sender, t0.Add(2*time.Minute), 1)
	record(maillimit.FormAutoresponse, org, "", t0, 5)
	for _, c := range []struct {
		name string
		f    maillimit.Filter
		want int
	}{
		{"workspace", maillimit.Filter{Kind: maillimit.Sign, OrgID: org, Since: t0.Add(-time.Hour)}, 3},
		{"sender across workspaces", maillimit.Filter{Kind: maillimit.Sign, SenderID: sender, Since: t0.Add(-time.Hour)}, 3},
		{"after since only", maillimit.Filter{Kind: maillimit.Sign, OrgID: org, Since: t0}, 1},
		{"another kind", maillimit.Filter{Kind: maillimit.FormAutoresponse, OrgID: org, Since: t0.Add(-time.Hour)}, 5},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%s: CountMail = %d; want %d", c.name, got, c.want)
		}
	}
	f := maillimit.Filter{Kind: maillimit.Sign, SenderID: sender, Since: t0.Add(-time.Hour)}
	for offset, want := range []time.Time{t0, t0, t0.Add(2 * time.Minute)} {
		if at, err := s.Forms.MailAt(ctx, f, offset); err != nil || !at.Equal(want) {
			t.Errorf("MailAt(%d) = %v, %v; want %v", offset, at, err, want)
		}
	}
	if _, err := s.Forms.MailAt(ctx, f, 3); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Errorf("MailAt past the last = %v; want ErrNotFound", err)
	}
	rollback := errors.New("roll back")
	if err := s.Forms.Tx(ctx, func(tx forms.Store) error {
		if err := tx.RecordMail(ctx, maillimit.Sign, org, sender, t0, 4); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if got := count(f); got != 3 {
		t.Errorf("CountMail after a rolled-back record = %d; want 3", got)
	}
	// Three days on, the workspace's next record prunes its old rows of
	// that kind; other workspaces and kinds keep theirs.
	record(maillimit.Sign, org, sender, t0.Add(72*time.Hour), 1)
	if got := count(maillimit.Filter{Kind: maillimit.Sign, OrgID: org, Since: t0.Add(-time.Hour)}); got != 1 {
		t.Errorf("workspace rows after the prune = %d; want 1", got)
	}
	if got := count(maillimit.Filter{Kind: maillimit.Sign, OrgID: other, Since: t0.Add(-time.Hour)}); got != 1 {
		t.Errorf("another workspace's rows after the prune = %d; want 1", got)
	}
	if got := count(maillimit.Filter{Kind: maillimit.FormAutoresponse, OrgID: org, Since: t0.Add(-time.Hour)}); got != 5 {
		t.Errorf("another kind's rows after the prune = %d; want 5", got)
	}
}
