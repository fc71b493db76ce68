package sqlstore

import (
	"context"
	"errors"
	"sync"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// refreshBatchMax is the most refreshes one statement carries.
const refreshBatchMax = 64

// refreshSlots is how many refresh batches one instance runs at once on
// PostgreSQL: one per two cores. Measured on 2 cores with 32 clients,
// one slot served 5,400–5,800 refreshes/s at p99 13 ms, two 4,100–4,900
// at 16–19 ms, four 3,700 at 23 ms: fewer statements carry more
// rotations each, and each commit's flush and process wake-ups are shared
// by more of them. SQLite, with its one writer, has one slot.
func refreshSlots(cores int) int { return max(1, cores/2) }

// refreshBatches lets the refreshes that queue together share one
// commit: on PostgreSQL one statement and one round trip, on SQLite one
// write transaction and one WAL sync (refreshBatch). A refresh that
// finds a free slot runs alone, at once, as before. One that finds none
// opens a batch and waits for a slot; refreshes of other sessions that
// arrive meanwhile join it; when it gets the slot the batch closes and
// runs, and each member gets its own row (or none: nothing rotated, and
// it takes the careful path). Like sharedReads, a batch starts after every
// member asked, so each sees the rows as its own statement would have.
type refreshBatches struct {
	slots chan struct{}
	mu    sync.Mutex
	open  *refreshGroup // the batch that waits for a slot; nil: none
}

type refreshGroup struct {
	calls []*refreshCall
	sids  map[string]bool
	done  chan struct{} // closed when every call has its answer
}

// refreshCall is one refresh: the session, the presented token's hash,
// its successor (created at the refresh's time) and the session policy
// the refresh is checked against; read and err are its answer (read nil:
// nothing rotated). ctx is its caller's: one that gave up before its
// batch ran is left out of it, rotating nothing.
type refreshCall struct {
	ctx       context.Context
	sid, hash string
	next      *identity.RefreshToken
	policy    identity.SessionPolicy
	read      *identity.RefreshRead
	err       error
}

func newRefreshBatches(slots int) *refreshBatches {
	return &refreshBatches{slots: make(chan struct{}, slots)}
}

// do runs c on s, alone or in a batch, and returns its answer.
func (b *refreshBatches) do(ctx context.Context, s *Identity, c *refreshCall) (*identity.RefreshRead, error) {
	b.mu.Lock()
	if o := b.open; o != nil {
		switch {
		case o.sids[c.sid]:
			// Another refresh of this session waits already: at most one
			// of them can rotate its token, and the careful path tells
			// this one what happened.
			b.mu.Unlock()
			return nil, nil
		case len(o.calls) < refreshBatchMax:
			o.calls = append(o.calls, c)
			o.sids[c.sid] = true
			b.mu.Unlock()
			select {
			case <-o.done:
				return c.read, c.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		b.mu.Unlock()
		return b.alone(ctx, s, c)
	}
	select {
	case b.slots <- struct{}{}:
		b.mu.Unlock()
		return b.run(ctx, s, c)
	default:
	}
	o := &refreshGroup{calls: []*refreshCall{c}, sids: map[string]bool{c.sid: true}, done: make(chan struct{})}
	b.open = o
	b.mu.Unlock()
	// The batch runs for every member, so its opener giving up must not
	// end it: it runs on its own.
	go b.lead(context.WithoutCancel(ctx), s, o)
	select {
	case <-o.done:
		return c.read, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// lead waits for a slot for batch o, closes it to newcomers, runs it and
// answers every member.
func (b *refreshBatches) lead(ctx context.Context, s *Identity, o *refreshGroup) {
	defer close(o.done)
	rctx, cancel := context.WithTimeout(ctx, sharedReadTimeout)
	defer cancel()
	select {
	case b.slots <- struct{}{}:
		b.closeOpen()
		s.runRefreshes(rctx, o.calls)
		<-b.slots
	case <-rctx.Done():
		b.closeOpen()
		for _, c := range o.calls {
			c.err = rctx.Err()
		}
	}
}

// closeOpen closes the open batch to newcomers, who open one of their own.
func (b *refreshBatches) closeOpen() {
	b.mu.Lock()
	b.open = nil
	b.mu.Unlock()
}

// alone runs c by itself, when a slot is free: the open batch is full.
func (b *refreshBatches) alone(ctx context.Context, s *Identity, c *refreshCall) (*identity.RefreshRead, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.run(ctx, s, c)
}

// run runs c by itself in the slot taken for it, and frees the slot.
func (b *refreshBatches) run(ctx context.Context, s *Identity, c *refreshCall) (*identity.RefreshRead, error) {
	defer func() { <-b.slots }()
	s.runRefreshes(ctx, []*refreshCall{c})
	return c.read, c.err
}

// runRefreshes runs the calls whose callers still wait and sets every
// call's answer.
func (s *Identity) runRefreshes(ctx context.Context, calls []*refreshCall) {
	live := calls[:0:0]
	for _, c := range calls {
		if c.ctx != nil && c.ctx.Err() != nil {
			c.err = c.ctx.Err()
		} else {
			live = append(live, c)
		}
	}
	if len(live) > 0 {
		s.refreshAll(ctx, live)
	}
}

// refreshAll runs calls as one refreshBatch, or one by one when that
// fails, and sets their answers. A token the history already holds is not
// rotated: the careful path deals with it. So is a second call of one
// session (the batches never hold one): its answer is the first's rows.
func (s *Identity) refreshAll(ctx context.Context, calls []*refreshCall) {
	seen := make(map[string]bool, len(calls))
	distinct := calls[:0:0]
	for _, c := range calls {
		if !seen[c.sid] {
			seen[c.sid] = true
			distinct = append(distinct, c)
		}
	}
	calls = distinct
	reads, err := s.refreshBatch(ctx, calls)
	if err != nil && len(calls) > 1 {
		for _, c := range calls {
			s.refreshAll(ctx, []*refreshCall{c})
		}
		return
	}
	if errors.Is(err, gatehouse.ErrConflict) {
		err = nil
	}
	for _, c := range calls {
		c.read, c.err = reads[c.sid], err
	}
}

// refreshBatch runs calls (of distinct sessions) in one commit and returns
// the reads by session; a session missing was not rotated. It fails with
// gatehouse.ErrConflict, having changed nothing, when the history already
// holds a presented token: the live one of a session migrated from before
// tokens named their session (a token issued, the schema taken down and
// up again); RotateRefresh marks that row.
func (s *Identity) refreshBatch(ctx context.Context, calls []*refreshCall) (map[string]*identity.RefreshRead, error) {
	if s.db.dialect.writableWith {
		return s.refreshStatement(ctx, calls)
	}
	return s.refreshTx(ctx, calls)
}

// refreshReadJoins join session s to its user, org and membership.
const refreshReadJoins = ` JOIN users u ON u.id = s.user_id
		LEFT JOIN orgs o ON o.id = COALESCE(s.org_id, u.default_org_id)
		LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = u.id`

// refreshMany checks and rotates the refresh tokens of several sign-in
// sessions in one PostgreSQL statement, each row of the arrays one refresh
// ($1 session, $2 presented hash, $3 successor's hash, $4 time, and the
// numbers of the refresh's identity.SessionPolicy: $5 Idle, $6 Absolute,
// in microseconds). A session is used and takes its new live token when
// the presented one is its live token, it is refreshable as
// SessionPolicy.Refreshable says (unrevoked, unexpired, within its
// absolute lifetime), not an OAuth grant's and owing no second factor (a
// pending session's successor must not outlive it: the careful path); its
// new expiry is SessionPolicy.End's, the sooner of idle after now and its
// absolute end. The conditional UPDATE lets one
// caller through, which alone keeps the rotated hash, and the rows each
// refresh needs (session, user, org and role) come back. No indexed
// column changes, so PostgreSQL can update the session in place (HOT); the
// history insert touches one index and checks no foreign key.
//
// It locks the sessions it can without waiting (SKIP LOCKED): a session
// another transaction holds is left out, and its caller takes the careful
// path, which waits. So a batch never waits for a row lock while it holds
// others, and cannot deadlock.
//
// The sessions are found by primary key alone, and the UPDATE reaches the
// rows locked by their physical address (ctid; a locked row cannot move),
// its every other condition joined to l or i: no condition on sessions by
// itself is left for the planner to mistake for a selective one (with
// sessions made since the last ANALYZE it took "grant_id IS NULL" for one
// and read every sign-in session for each batch). A row updated and
// committed by another between the statement's start and its lock is
// locked in its newer version, which this statement cannot see: nothing
// is rotated, and the careful path reads it afresh.
const refreshMany = `WITH i AS (
		SELECT * FROM unnest(CAST($1 AS TEXT[]), CAST($2 AS TEXT[]), CAST($3 AS TEXT[]), CAST($4 AS BIGINT[]), CAST($5 AS BIGINT[]), CAST($6 AS BIGINT[]))
			AS i(sid, hash, next, at, idle, absolute)
	), l AS (
		SELECT ctid AS row, id, revoked_at IS NULL AND grant_id IS NULL AND NOT mfa_pending AS usable
		FROM sessions WHERE id = ANY(CAST($1 AS TEXT[])) FOR NO KEY UPDATE SKIP LOCKED
	), s AS (
		UPDATE sessions SET refresh_hash = i.next, last_used_at = i.at, expires_at = LEAST(i.at + i.idle, sessions.created_at + i.absolute)
		FROM l JOIN i ON i.sid = l.id
		WHERE sessions.ctid = l.row AND l.usable AND sessions.refresh_hash = i.hash
			AND sessions.expires_at > i.at AND sessions.created_at + i.absolute > i.at
		RETURNING sessions.*, i.hash AS presented, i.at AS rotated_at
	), h AS (
		INSERT INTO refresh_history (token_hash, session_id, rotated_at, expires_at)
		SELECT presented, id, rotated_at, expires_at FROM s
	)
	SELECT `

// refreshManySQL is refreshMany with the read of each refresh.
func (s *Identity) refreshManySQL() string {
	return refreshMany + s.refreshReadColumns() + ` FROM s` + refreshReadJoins
}

// refreshStatement is refreshBatch on PostgreSQL: one refreshMany.
func (s *Identity) refreshStatement(ctx context.Context, calls []*refreshCall) (map[string]*identity.RefreshRead, error) {
	if !s.db.wgate.enter(ctx) {
		return nil, ctx.Err()
	}
	defer s.db.wgate.leave()
	n := len(calls)
	sids, hashes, nexts := make([]string, n), make([]string, n), make([]string, n)
	ats, idle, absolute := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, c := range calls {
		sids[i], hashes[i], nexts[i] = c.sid, c.hash, c.next.Hash
		ats[i], idle[i], absolute[i] = micros(c.next.CreatedAt), c.policy.Idle.Microseconds(), c.policy.Absolute.Microseconds()
	}
	rows, err := s.db.writer.QueryContext(ctx, s.refreshManySQL(), sids, hashes, nexts, ats, idle, absolute)
	if err != nil {
		return nil, s.db.dialect.translate(err)
	}
	defer rows.Close()
	reads := make(map[string]*identity.RefreshRead, n)
	for rows.Next() {
		read, err := s.scanRefreshRead(rows, true)
		if err != nil {
			return nil, err
		}
		reads[read.Session.ID] = read
	}
	return reads, s.db.dialect.translate(rows.Err())
}
