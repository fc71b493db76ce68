package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// policy is the session policy the tests refresh under: successors live
// two hours, sessions 90 days.
var policy = identity.SessionPolicy{Idle: 2 * time.Hour, Absolute: 90 * 24 * time.Hour}

// batchFixture is a fresh database of kind and an account whose sessions
// the tests refresh.
type batchFixture struct {
	kind string
	db   *sqlstore.DB
	st   *sqlstore.Identity
	a    *testenv.Account
}

func newBatchFixture(t *testing.T, kind string) *batchFixture {
	db := open(t, testenv.FreshURL(t, kind))
	a := testenv.New(t, kind, testenv.Options{DB: db}).Register(t)
	return &batchFixture{kind: kind, db: db, st: db.Identity(), a: a}
}

// onEach runs fn on a fresh fixture of each database: refreshes are
// batched on both (PostgreSQL: one statement; SQLite: one transaction).
func onEach(t *testing.T, fn func(t *testing.T, f *batchFixture)) {
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) { fn(t, newBatchFixture(t, kind)) })
	}
}

// session stores a live sign-in session of the account and returns it
// with the hash of its token.
func (f *batchFixture) session(t *testing.T) (*identity.Session, string) {
	t.Helper()
	now := time.Now()
	ss := &identity.Session{ID: uuid.NewString(), UserID: f.a.UserID, Via: "password", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
		LastUsedAt: now, RefreshHash: testenv.RandomHex(32)}
	if err := f.st.CreateSession(context.Background(), ss); err != nil {
		t.Fatal(err)
	}
	return ss, ss.RefreshHash
}

// waitQueued waits until n refreshes wait in the open batch; past 5 s it
// releases the slots held (release) and fails.
func (f *batchFixture) waitQueued(t *testing.T, n int, release func()) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.db.RefreshesWaiting() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("refreshes waiting = %d; want %d", f.db.RefreshesWaiting(), n)
		}
	}
}

// next is a successor for session sid.
func next(sid string) *identity.RefreshToken {
	now := time.Now()
	return &identity.RefreshToken{Hash: testenv.RandomHex(32), SessionID: sid, CreatedAt: now, ExpiresAt: now.Add(2 * time.Hour)}
}

// live reports whether hash is session sid's live token.
func (f *batchFixture) live(t *testing.T, sid, hash string) bool {
	t.Helper()
	tok, err := f.st.RefreshToken(context.Background(), sid, hash)
	return err == nil && tok.RotatedAt == nil
}

// One batch refreshes several sessions, and each refresh gets its own
// answer: only the live, unexpired, unrevoked sessions that owe no second
// factor rotate; a second refresh of a session in the same batch rotates
// nothing (the careful path tells it why); and on PostgreSQL a session
// another transaction holds is left out at once, unchanged, for the
// careful path (which waits), rather than waited for while the batch holds
// the others' rows (SQLite has no row locks: its batch holds the writer).
func TestRefreshBatchAnswersEach(t *testing.T) { onEach(t, testRefreshBatchAnswersEach) }

func testRefreshBatchAnswersEach(t *testing.T, f *batchFixture) {
	ctx := context.Background()
	good, goodHash := f.session(t)
	wrong, _ := f.session(t)
	revoked, revokedHash := f.session(t)
	exec(t, f.db, `UPDATE sessions SET revoked_at = $2 WHERE id = $1`, revoked.ID, time.Now().UnixMicro())
	expired, expiredHash := f.session(t)
	exec(t, f.db, `UPDATE sessions SET expires_at = $2 WHERE id = $1`, expired.ID, time.Now().Add(-time.Second).UnixMicro())
	pending, pendingHash := f.session(t)
	exec(t, f.db, `UPDATE sessions SET mfa_pending = TRUE WHERE id = $1`, pending.ID)
	sids := []string{good.ID, wrong.ID, revoked.ID, expired.ID, pending.ID, good.ID}
	hashes := []string{goodHash, testenv.RandomHex(32), revokedHash, expiredHash, pendingHash, goodHash}
	var locked *identity.Session
	var lockedHash string
	unlock := func() {}
	if f.kind == "postgres" {
		locked, lockedHash = f.session(t)
		tx, err := f.db.DB().Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		unlock = func() { tx.Rollback() }
		if _, err := tx.Exec(`SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, locked.ID); err != nil {
			t.Fatal(err)
		}
		sids, hashes = append(sids, locked.ID), append(hashes, lockedHash)
	}

	nexts := make([]*identity.RefreshToken, len(sids))
	for i, sid := range sids {
		nexts[i] = next(sid)
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	reads, errs := f.st.RefreshAll(bctx, sids, hashes, nexts, policy)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a batch with a locked session took %v; want it left out at once", took)
	}
	for i := range sids {
		if errs[i] != nil {
			t.Errorf("refresh %d: error %v", i, errs[i])
		}
		if want := i == 0; (reads[i] != nil) != want {
			t.Errorf("refresh %d rotated: %v; want %v", i, reads[i] != nil, want)
		}
	}
	if r := reads[0]; r != nil && (r.Session.ID != good.ID || r.User.ID != f.a.UserID || r.Org == nil || r.Org.ID != f.a.OrgID || r.Role == "") {
		t.Errorf("read of the rotated refresh = session %s, user %s, org %+v, role %q; want %s, %s, %s and a role",
			r.Session.ID, r.User.ID, r.Org, r.Role, good.ID, f.a.UserID, f.a.OrgID)
	}
	unlock()
	if f.live(t, good.ID, goodHash) || !f.live(t, good.ID, nexts[0].Hash) {
		t.Error("the rotated session's presented token is still live, or its successor is not")
	}
	if locked != nil && !f.live(t, locked.ID, lockedHash) {
		t.Error("the locked session's token is no longer live; want it left for the careful path")
	}
	for i, sid := range sids[1:] {
		if f.live(t, sid, nexts[i+1].Hash) {
			t.Errorf("refused refresh %d stored its successor", i+1)
		}
	}
}

// A batch the history undoes (its live token is in the history too: a
// session migrated from before tokens named their session, then the
// schema taken down and up) runs again one refresh at a time: the others
// rotate, that one is left to the careful path, without an error.
func TestRefreshBatchUndoneRunsAlone(t *testing.T) { onEach(t, testRefreshBatchUndoneRunsAlone) }

func testRefreshBatchUndoneRunsAlone(t *testing.T, f *batchFixture) {
	good, goodHash := f.session(t)
	old, oldHash := f.session(t)
	exec(t, f.db, `INSERT INTO refresh_history (token_hash, session_id, expires_at) VALUES ($1, $2, $3)`,
		oldHash, old.ID, time.Now().Add(time.Hour).UnixMicro())
	nexts := []*identity.RefreshToken{next(good.ID), next(old.ID)}
	reads, errs := f.st.RefreshAll(context.Background(), []string{good.ID, old.ID}, []string{goodHash, oldHash}, nexts, policy)
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("errors %v; want none", errs)
	}
	if reads[0] == nil || reads[1] != nil {
		t.Errorf("rotated: %v, %v; want the first only", reads[0] != nil, reads[1] != nil)
	}
	if !f.live(t, good.ID, nexts[0].Hash) || !f.live(t, old.ID, oldHash) {
		t.Error("want the first session rotated and the other's token still live")
	}
}

// Refreshes that queue while every slot is taken wait as one batch and
// then run as one commit (on PostgreSQL one transaction wrote both
// sessions); a
// second refresh of a session already in the batch is not queued, since
// at most one of them can rotate its token, and goes to the careful path
// at once.
func TestRefreshBatchesQueueTogether(t *testing.T) { onEach(t, testRefreshBatchesQueueTogether) }

func testRefreshBatchesQueueTogether(t *testing.T, f *batchFixture) {
	ctx := context.Background()
	x, xHash := f.session(t)
	y, yHash := f.session(t)
	release := f.db.HoldRefreshSlots()
	type answer struct {
		ok  bool
		err error
	}
	answers := make(chan answer, 2)
	refresh := func(ss *identity.Session, hash string) {
		_, ok, err := f.st.RefreshOnce(ctx, ss.ID, hash, next(ss.ID), policy)
		answers <- answer{ok, err}
	}
	go refresh(x, xHash)
	f.waitQueued(t, 1, release)
	again := make(chan answer, 1)
	go func() {
		_, ok, err := f.st.RefreshOnce(ctx, x.ID, xHash, next(x.ID), policy)
		again <- answer{ok, err}
	}()
	select {
	case a := <-again:
		if a.ok || a.err != nil {
			t.Errorf("a second refresh of a queued session: rotated %v, error %v; want neither", a.ok, a.err)
		}
	case <-time.After(2 * time.Second):
		t.Error("a second refresh of a queued session waited with the batch; want it sent to the careful path at once")
	}
	go refresh(y, yHash)
	f.waitQueued(t, 2, release)
	release()
	for range 2 {
		if a := <-answers; !a.ok || a.err != nil {
			t.Errorf("queued refresh: rotated %v, error %v; want rotated", a.ok, a.err)
		}
	}
	if f.kind != "postgres" {
		return // SQLite: one write transaction by construction (refreshTx)
	}
	var xs []string
	rows, err := f.db.DB().Query(`SELECT xmin::text FROM sessions WHERE id IN ($1, $2)`, x.ID, y.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var xmin string
		if err := rows.Scan(&xmin); err != nil {
			t.Fatal(err)
		}
		xs = append(xs, xmin)
	}
	if len(xs) != 2 || xs[0] != xs[1] {
		t.Errorf("transactions that wrote the two sessions = %v; want one", xs)
	}
}

// Many sessions refreshed at once, over and over, as a busy instance
// batches them: every refresh rotates its own session's token, and every
// rotated token is kept in the history.
func TestRefreshBatchesUnderLoad(t *testing.T) { onEach(t, testRefreshBatchesUnderLoad) }

func testRefreshBatchesUnderLoad(t *testing.T, f *batchFixture) {
	const sessions, rounds = 24, 20
	var wg sync.WaitGroup
	for range sessions {
		ss, hash := f.session(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				n := next(ss.ID)
				read, ok, err := f.st.RefreshOnce(context.Background(), ss.ID, hash, n, policy)
				if !ok || err != nil || read.Session.ID != ss.ID {
					t.Errorf("refresh %d of session %s: rotated %v, error %v", i, ss.ID, ok, err)
					return
				}
				hash = n.Hash
			}
			if !f.live(t, ss.ID, hash) {
				t.Errorf("session %s: the last successor is not live", ss.ID)
			}
		}()
	}
	wg.Wait()
	var kept int
	if err := f.db.DB().QueryRow(`SELECT count(*) FROM refresh_history`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != sessions*rounds {
		t.Errorf("rotated tokens in the history = %d; want %d", kept, sessions*rounds)
	}
}

// A batch finds each session by its primary key and updates the rows it
// locked where they are, whatever the planner knows of the table:
// sessions made since the last ANALYZE once led PostgreSQL to read every
// sign-in session (through the grant index, or all of them, for
// "grant_id IS NULL") for each batch, and PostgreSQL refreshes fell to a
// third. The plan checked is the generic one, which a prepared statement
// keeps.
func TestRefreshBatchFindsSessionsByKey(t *testing.T) {
	f := newBatchFixture(t, "postgres")
	ctx := context.Background()
	exec(t, f.db, `INSERT INTO sessions (id, user_id, via, created_at, expires_at, last_used_at, refresh_hash)
		SELECT 'bulk-' || g, $1, 'password', 0, 1, 0, md5(g::text) FROM generate_series(1, 3000) g`, f.a.UserID)
	conn, err := f.db.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		`SET plan_cache_mode = force_generic_plan`,
		`PREPARE batch (TEXT[], TEXT[], TEXT[], BIGINT[], BIGINT[], BIGINT[]) AS ` + f.st.RefreshManySQL(),
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.QueryContext(ctx, `EXPLAIN EXECUTE batch(ARRAY['bulk-1', 'bulk-2'], ARRAY['a', 'b'], ARRAY['c', 'd'], ARRAY[1, 1], ARRAY[2, 2], ARRAY[3, 3])`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "sessions_grant") || strings.Contains(text, "Seq Scan on sessions") || !strings.Contains(text, "Tid Scan on sessions") {
		t.Errorf("plan of a batch reads sessions other than by primary key:\n%s", text)
	}
}

// On SQLite too the batch's rotation and read find each session by its
// primary key, among thousands: the rotation scans its list of refreshes
// and searches sessions, never the other way round, and the read
// searches.
func TestRefreshBatchFindsSessionsByKeySQLite(t *testing.T) {
	f := newBatchFixture(t, "sqlite")
	ctx := context.Background()
	exec(t, f.db, `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000)
		INSERT INTO sessions (id, user_id, via, created_at, expires_at, last_used_at, refresh_hash)
		SELECT 'bulk-' || n, $1, 'password', 0, 1, 0, hex(randomblob(16)) FROM g`, f.a.UserID)
	exec(t, f.db, `ANALYZE`)
	rotate, read := f.st.RefreshTxSQL(2)
	for _, tc := range []struct {
		name, query string
		args        []any
	}{
		{"rotation", rotate, []any{"bulk-1", "a", "c", 1, 2, 3, "bulk-2", "b", "d", 1, 2, 3}},
		{"read", read, []any{"bulk-1", "bulk-2"}},
	} {
		rows, err := f.db.DB().QueryContext(ctx, `EXPLAIN QUERY PLAN `+tc.query, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "SCAN sessions") || strings.Contains(text, "SCAN s ") || !strings.Contains(text, "USING INDEX sqlite_autoindex_sessions_1 (id=?)") {
			t.Errorf("plan of the batch's %s reads sessions other than by primary key:\n%s", tc.name, text)
		}
	}
}

// A batch of more refreshes than the batches ever hold together (their
// statements' texts are kept up to that size) still rotates each.
func TestRefreshBatchLargerThanKept(t *testing.T) { onEach(t, testRefreshBatchLargerThanKept) }

func testRefreshBatchLargerThanKept(t *testing.T, f *batchFixture) {
	n := sqlstore.RefreshBatchMax + 6
	sids, hashes, nexts := make([]string, n), make([]string, n), make([]*identity.RefreshToken, n)
	for i := range n {
		ss, hash := f.session(t)
		sids[i], hashes[i], nexts[i] = ss.ID, hash, next(ss.ID)
	}
	reads, errs := f.st.RefreshAll(context.Background(), sids, hashes, nexts, policy)
	for i := range n {
		if errs[i] != nil || reads[i] == nil || !f.live(t, sids[i], nexts[i].Hash) {
			t.Fatalf("refresh %d of %d: read %v, error %v; want rotated", i, n, reads[i] != nil, errs[i])
		}
	}
}

// A forged token naming a session (its id is in every access token) that
// queues first holds that session's place in the batch, so the owner's
// refresh goes to the careful path: it still rotates there, at once, and
// the forged one rotates nothing.
func TestRefreshBatchForgedFirst(t *testing.T) { onEach(t, testRefreshBatchForgedFirst) }

func testRefreshBatchForgedFirst(t *testing.T, f *batchFixture) {
	ctx := context.Background()
	ss, hash := f.session(t)
	release := f.db.HoldRefreshSlots()
	forged := make(chan bool, 1)
	go func() {
		_, ok, err := f.st.RefreshOnce(ctx, ss.ID, testenv.RandomHex(32), next(ss.ID), policy)
		forged <- ok || err != nil
	}()
	f.waitQueued(t, 1, release)
	n := next(ss.ID)
	owner := make(chan bool, 1)
	go func() {
		_, ok, err := f.st.RefreshOnce(ctx, ss.ID, hash, next(ss.ID), policy)
		owner <- ok || err != nil
	}()
	select {
	case done := <-owner:
		if done {
			t.Error("the owner's refresh behind a queued forgery rotated or failed; want it sent to the careful path")
		}
	case <-time.After(2 * time.Second):
		t.Error("the owner's refresh waited behind a queued forgery; want it sent to the careful path at once")
	}
	if err := f.st.RotateRefresh(ctx, hash, n); err != nil {
		t.Errorf("the careful path's rotation while the forgery waits: %v", err)
	}
	release()
	if <-forged {
		t.Error("the forged refresh rotated or failed; want nothing rotated")
	}
	if !f.live(t, ss.ID, n.Hash) {
		t.Error("the owner's successor is not the live token")
	}
}
