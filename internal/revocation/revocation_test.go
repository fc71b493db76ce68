package revocation

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeSource answers RevokedSince from a slice and records the since asked.
type fakeSource struct {
	mu     sync.Mutex
	es     []Entry
	asked  []time.Time
	broken error
}

func (f *fakeSource) RevokedSince(_ context.Context, since time.Time) ([]Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, since)
	var out []Entry
	for _, e := range f.es {
		if !e.At.Before(since) {
			out = append(out, e)
		}
	}
	return out, f.broken
}

func TestRefused(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 500_000_000, time.UTC)
	src := &fakeSource{es: []Entry{
		{KindSession, "s1", "", now}, {KindKey, "k1", "", now}, {KindUser, "u1", "", now},
		{KindOrg, "o1", "", now}, {KindMember, "u2", "o2", now},
	}}
	l := New(src, func() time.Time { return now }, 0, nil)
	if l.Refused(Token{SessionID: "s1"}) {
		t.Fatal("refused before the first load")
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := now.Truncate(time.Second) // a token's iat has whole seconds
	for _, c := range []struct {
		name string
		tok  Token
		want bool
	}{
		{"revoked session", Token{SessionID: "s1", Subject: "u9", OrgID: "o9"}, true},
		{"revoked key", Token{KeyID: "k1", Subject: "u9", OrgID: "o9"}, true},
		{"deleted account", Token{Subject: "u1", OrgID: "o9"}, true},
		{"deleted org", Token{Subject: "u9", OrgID: "o1"}, true},
		{"removed member, token from before", Token{Subject: "u2", OrgID: "o2", IssuedAt: before}, true},
		{"member added back, token from after", Token{Subject: "u2", OrgID: "o2", IssuedAt: before.Add(time.Second)}, false},
		{"removed member in another org", Token{Subject: "u2", OrgID: "o3", IssuedAt: before}, false},
		{"other session", Token{SessionID: "s2", Subject: "u9", OrgID: "o9"}, false},
		{"empty claims", Token{}, false},
	} {
		if got := l.Refused(c.tok); got != c.want {
			t.Errorf("%s: Refused = %v; want %v", c.name, got, c.want)
		}
	}
}

// TestSyncWindow: the first load reads the last Keep; later polls read
// from the previous poll less Overlap; entries older than Keep are
// dropped, and a failed poll keeps the list and retries from the same
// point.
func TestSyncWindow(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	src := &fakeSource{es: []Entry{{KindSession, "old", "", now.Add(-30 * time.Minute)}}}
	l := New(src, clock, time.Second, nil)
	ctx := context.Background()
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := src.asked[0], now.Add(-Keep); !got.Equal(want) {
		t.Errorf("first since = %v; want %v", got, want)
	}
	now = now.Add(time.Second)
	src.broken = context.DeadlineExceeded
	if err := l.Sync(ctx); err == nil {
		t.Error("Sync of a failing source = nil; want its error")
	}
	src.broken = nil
	now = now.Add(time.Second)
	src.es = append(src.es, Entry{KindSession, "new", "", now})
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := src.asked[2], now.Add(-2*time.Second-Overlap); !got.Equal(want) {
		t.Errorf("since after a failed poll = %v; want %v", got, want)
	}
	if !l.Refused(Token{SessionID: "old"}) || !l.Refused(Token{SessionID: "new"}) {
		t.Fatal("want both sessions refused")
	}
	now = now.Add(Keep - 20*time.Minute)
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if l.Refused(Token{SessionID: "old"}) || !l.Refused(Token{SessionID: "new"}) {
		t.Errorf("after Keep: old refused %v, new refused %v; want false, true", l.Refused(Token{SessionID: "old"}), l.Refused(Token{SessionID: "new"}))
	}
}

// TestRefusedDuringSync: readers, adders and polls at once (run with
// -race); what one adds is refused right after.
func TestRefusedDuringSync(t *testing.T) {
	now := time.Now()
	src := &fakeSource{}
	l := New(src, func() time.Time { return now }, time.Millisecond, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Run(ctx)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 2000 {
				id := strconv.Itoa(i) + "-" + strconv.Itoa(j)
				switch i {
				case 0:
					src.mu.Lock()
					src.es = append(src.es, Entry{KindSession, string(rune('a' + j%26)), "", now})
					src.mu.Unlock()
					l.Sync(ctx)
				case 1, 2:
					l.Add(Entry{KindSession, id, "", now}, Entry{KindMember, id, "o", now})
					if !l.Refused(Token{SessionID: id}) || !l.Refused(Token{Subject: id, OrgID: "o", IssuedAt: now}) {
						t.Errorf("%s not refused right after Add", id)
						return
					}
				}
				l.Refused(Token{SessionID: "a", Subject: id, OrgID: "o"})
			}
		}()
	}
	wg.Wait()
	if !l.Refused(Token{SessionID: "a"}) {
		t.Error("session a not refused")
	}
}

// BenchmarkRefused is the cost every bearer token pays, with 10,000
// revocations on the list (an hour of busy sign-outs).
func BenchmarkRefused(b *testing.B) {
	now := time.Now()
	src := &fakeSource{}
	for i := range 10_000 {
		src.es = append(src.es, Entry{KindSession, "s" + string(rune(i)), "", now}, Entry{KindMember, "u" + string(rune(i)), "o", now})
	}
	l := New(src, func() time.Time { return now }, 0, nil)
	if err := l.Sync(context.Background()); err != nil {
		b.Fatal(err)
	}
	tok := Token{SessionID: "live", KeyID: "", Subject: "someone", OrgID: "o", IssuedAt: now}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if l.Refused(tok) {
				b.Fatal("refused")
			}
		}
	})
}

// TestAdd: entries handed to Add are refused at once, without a read of
// the source; a membership removed again keeps its latest time, and a
// member added back after it gets working tokens; added entries are
// dropped like polled ones once older than Keep.
func TestAdd(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	src := &fakeSource{}
	l := New(src, func() time.Time { return now }, 0, nil)
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := now.Add(-time.Minute)
	l.Add(Entry{KindSession, "s1", "", now}, Entry{KindMember, "u1", "o1", now}, Entry{KindMember, "u1", "o1", first})
	if len(src.asked) != 1 {
		t.Errorf("Add read the source: %d reads; want 1 (the first load)", len(src.asked))
	}
	for _, c := range []struct {
		name string
		tok  Token
		want bool
	}{
		{"added session", Token{SessionID: "s1"}, true},
		{"member, token from before the later removal", Token{Subject: "u1", OrgID: "o1", IssuedAt: now.Add(-time.Second)}, true},
		{"member added back after it", Token{Subject: "u1", OrgID: "o1", IssuedAt: now.Add(time.Second)}, false},
		{"a session id as a member", Token{Subject: "s1", OrgID: "o1", IssuedAt: now}, true}, // s1 is a revoked id as any claim
		{"other member", Token{Subject: "u2", OrgID: "o1", IssuedAt: now}, false},
	} {
		if got := l.Refused(c.tok); got != c.want {
			t.Errorf("%s: Refused = %v; want %v", c.name, got, c.want)
		}
	}
	now = now.Add(Keep + time.Minute)
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.Refused(Token{SessionID: "s1"}) || l.Refused(Token{Subject: "u1", OrgID: "o1", IssuedAt: now.Add(-Keep)}) {
		t.Error("added entries still refused after Keep")
	}
}

// TestAddMerges: past the overlay's size, adds merge it into the base and
// nothing is lost, and a member removed again after the merge is refused
// from the later time.
func TestAddMerges(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	l := New(&fakeSource{}, func() time.Time { return now }, 0, nil)
	l.Add(Entry{KindMember, "u", "o", now.Add(-time.Hour)})
	const n = 5 * minOverlay
	for i := range n {
		l.Add(Entry{KindSession, "s" + strconv.Itoa(i), "", now})
	}
	if got := len(l.snap.Load().ids); got < n/2 {
		t.Errorf("base holds %d ids after %d adds; want the overlay merged into it", got, n)
	}
	for i := range n {
		if !l.Refused(Token{SessionID: "s" + strconv.Itoa(i)}) {
			t.Fatalf("s%d not refused", i)
		}
	}
	tok := Token{Subject: "u", OrgID: "o", IssuedAt: now.Add(-time.Minute)}
	if l.Refused(tok) {
		t.Fatal("token issued after the member's first removal refused")
	}
	l.Add(Entry{KindMember, "u", "o", now})
	if !l.Refused(tok) {
		t.Error("token issued before the member's second removal not refused")
	}
}

// BenchmarkAdd is what a revoking commit pays to publish one entry, on a
// list of 100,000 (it must not grow with the list).
func BenchmarkAdd(b *testing.B) {
	now := time.Now()
	l := New(&fakeSource{}, func() time.Time { return now }, 0, nil)
	for i := range 100_000 {
		l.Add(Entry{KindSession, "base" + strconv.Itoa(i), "", now})
	}
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = "s" + strconv.Itoa(i)
	}
	b.ResetTimer()
	for i := range b.N {
		l.Add(Entry{KindSession, ids[i], "", now})
	}
}

// TestPolicyRaised: an org that began requiring two-factor is listed as
// such, read by the poll or added by this instance, until Keep has passed;
// its entry refuses no token, even one whose ids match its org.
func TestPolicyRaised(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	src := &fakeSource{es: []Entry{{KindPolicy, PolicyPrefix + "o1", "o1", now}}}
	clock := now
	l := New(src, func() time.Time { return clock }, 0, nil)
	if l.PolicyRaised("o1") {
		t.Fatal("raised before the first load")
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Add(Entry{KindPolicy, PolicyPrefix + "o2", "o2", now})
	for org, want := range map[string]bool{"o1": true, "o2": true, "o3": false} {
		if got := l.PolicyRaised(org); got != want {
			t.Errorf("PolicyRaised(%s) = %v; want %v", org, got, want)
		}
	}
	if l.Refused(Token{Subject: "o1", OrgID: "o1", SessionID: "o1", KeyID: "o1"}) {
		t.Error("a policy entry refuses a token")
	}
	clock = now.Add(Keep + time.Minute)
	if l.PolicyRaised("o1") {
		t.Error("raised after Keep")
	}
}

// TestBefore: a KindBefore entry refuses the tokens its account (sub) or
// key (key_id) had issued up to its time, in any workspace, polled or
// added, before and after a merge, and none issued after it; it is not an
// absolute revocation of the id.
func TestBefore(t *testing.T) {
	now := time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC)
	src := &fakeSource{es: []Entry{{KindBefore, "u-polled", "", now}}}
	l := New(src, func() time.Time { return now }, 0, nil)
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Add(Entry{KindBefore, "u1", "", now}, Entry{KindBefore, "k1", "", now})
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			name string
			tok  Token
			want bool
		}{
			{"polled account, token from before", Token{Subject: "u-polled", OrgID: "o1", IssuedAt: now.Add(-time.Minute)}, true},
			{"account's token from before, any workspace", Token{Subject: "u1", OrgID: "o9", KeyID: "k-personal", IssuedAt: now.Add(-time.Minute)}, true},
			{"account's token in the same second", Token{Subject: "u1", OrgID: "o9", IssuedAt: now}, true},
			{"account's token from after", Token{Subject: "u1", OrgID: "o9", IssuedAt: now.Add(time.Second)}, false},
			{"org key's token from before", Token{Subject: "k1", KeyID: "k1", OrgID: "o1", IssuedAt: now.Add(-time.Minute)}, true},
			{"org key's token from after", Token{Subject: "k1", KeyID: "k1", OrgID: "o1", IssuedAt: now.Add(time.Second)}, false},
			{"another account", Token{Subject: "u2", OrgID: "o9", IssuedAt: now.Add(-time.Minute)}, false},
			{"the account's id as a workspace id", Token{Subject: "u3", OrgID: "u1", IssuedAt: now.Add(-time.Minute)}, false},
		} {
			if got := l.Refused(c.tok); got != c.want {
				t.Errorf("%s, %s: Refused = %v; want %v", when, c.name, got, c.want)
			}
		}
	}
	check("added")
	for i := range 2 * minOverlay {
		l.Add(Entry{KindSession, "s" + strconv.Itoa(i), "", now})
	}
	check("merged")
	now = now.Add(Keep + time.Minute)
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.Refused(Token{Subject: "u1", IssuedAt: now.Add(-Keep - 2*time.Minute)}) {
		t.Error("a KindBefore entry still refuses after Keep")
	}
}
