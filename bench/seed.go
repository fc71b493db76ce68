package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // registers the "sqlite" driver, as gatehouse uses
)

// dbInfo is the database a gatehouse under test runs on, for targets that
// seed rows directly (far too slow, or impossible, through the API).
type dbInfo struct {
	kind  string     // sqlite or postgres
	url   string     // GATEHOUSE_DATABASE_URL
	audit *auditSeed // the seeded audit log, if -targets asked for it
}

// seedDB is one direct connection to the database under test.
type seedDB struct {
	kind string
	sq   *sql.DB   // sqlite
	pg   *pgx.Conn // postgres
}

// sqliteDSN opens path with the pragmas gatehouse uses, so the bench's
// writes queue behind the server's (busy_timeout) instead of failing.
func sqliteDSN(dbURL string) string {
	path := strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "//")
	return "file:" + path + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

func openSeedDB(ctx context.Context, d *dbInfo) (*seedDB, error) {
	if d == nil {
		return nil, skipf("needs direct access to the server's database (not available with -url)")
	}
	s := &seedDB{kind: d.kind}
	switch d.kind {
	case "sqlite":
		db, err := sql.Open("sqlite", sqliteDSN(d.url))
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		s.sq = db
	case "postgres":
		conn, err := pgx.Connect(ctx, d.url)
		if err != nil {
			return nil, fmt.Errorf("connect to postgres: %w", err)
		}
		s.pg = conn
	default:
		return nil, fmt.Errorf("unknown database kind %q", d.kind)
	}
	return s, nil
}

func (s *seedDB) Close() {
	if s.sq != nil {
		s.sq.Close()
	}
	if s.pg != nil {
		s.pg.Close(context.Background())
	}
}

// exec runs one statement; $1… placeholders work on both databases.
func (s *seedDB) exec(ctx context.Context, q string, args ...any) error {
	if s.pg != nil {
		_, err := s.pg.Exec(ctx, q, args...)
		return err
	}
	_, err := s.sq.ExecContext(ctx, q, args...)
	return err
}

// insert adds rows to table in one transaction: COPY on PostgreSQL, one
// prepared INSERT on SQLite. Values are string, int64 or nil (NULL).
func (s *seedDB) insert(ctx context.Context, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if s.pg != nil {
		_, err := s.pg.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		if err != nil {
			return fmt.Errorf("copy into %s: %w", table, err)
		}
		return nil
	}
	tx, err := s.sq.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ph := make([]string, len(cols))
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES ("+strings.Join(ph, ", ")+")")
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range rows {
		if _, err := st.ExecContext(ctx, r...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return tx.Commit()
}

// newUUID returns a random version 4 UUID string.
func newUUID() string {
	h := randomHex(16)
	b := []byte(h)
	b[12] = '4'
	b[16] = "89ab"[b[16]%4]
	return string(b[0:8]) + "-" + string(b[8:12]) + "-" + string(b[12:16]) + "-" + string(b[16:20]) + "-" + string(b[20:32])
}

func nowMicros() int64 { return time.Now().UnixMicro() }

// seedUsers inserts n users with unique lowercase emails tagged tag and
// returns their ids. They have no password: nobody signs in as them.
func (s *seedDB) seedUsers(ctx context.Context, tag string, n int) ([]string, error) {
	ids := make([]string, n)
	rows := make([][]any, n)
	now := nowMicros()
	for i := range n {
		ids[i] = newUUID()
		// ASCII and lower-case: the address is its own account key.
		email := fmt.Sprintf("bench-%s-%d@example.com", tag, i)
		rows[i] = []any{ids[i], email, email, fmt.Sprintf("Bench Member %d", i), now, now}
	}
	return ids, s.insert(ctx, "users", []string{"id", "email", "email_key", "name", "created_at", "updated_at"}, rows)
}

// teamOrgRow is an orgs row of kind team with no owner_id, as gatehouse
// stores team orgs.
func teamOrgRow(id, name, slug string, created int64) []any {
	return []any{id, name, slug, "", "team", nil, created}
}

var orgCols = []string{"id", "name", "slug", "avatar_url", "kind", "owner_id", "created_at"}
var memberCols = []string{"org_id", "user_id", "role", "joined_at"}

// migrateDatabase runs "gatehouse migrate" on dbURL, as seeding before the
// server starts needs the schema.
func migrateDatabase(ctx context.Context, bin, dbURL string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "migrate")
	cmd.Env = gatehouseEnv(dbURL)
	cmd.SysProcAttr = childAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gatehouse migrate: %v\n%s", err, out)
	}
	return nil
}

// auditSeed describes the audit log seeded before the server started.
type auditSeed struct {
	orgID    string // the audited org: orgEntries entries
	orgRows  int
	total    int
	others   int // other org ids sharing the log
	took     time.Duration
	analyzed bool
}

// auditTools are the seven tools and identity, with the kind of object
// each one's actions are about.
var auditTools = []struct{ tool, object string }{
	{"tasks", "issue"}, {"notes", "note"}, {"sign", "document"}, {"links", "link"},
	{"forms", "form"}, {"croncrunch", "job"}, {"crm", "contact"}, {"identity", "member"},
}

// seedAudit fills audit_log with total entries: orgRows for one team org
// (whose orgs row it creates) and the rest spread evenly over others org
// ids. It runs before gatehouse starts, after the migrations. Each org's
// entries are inserted in (org, at) order with ids derived from the org's
// number and the entry's, so every index grows at a few points per org —
// the way a log that is written over time grows, not a random scatter.
func seedAudit(ctx context.Context, d *dbInfo, orgRows, total, others int) (*auditSeed, error) {
	s, err := openSeedDB(ctx, d)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	a := &auditSeed{orgID: newUUID(), orgRows: orgRows, total: total, others: others}
	began := time.Now()
	if s.sq != nil {
		// Nothing else has the file open yet: write it without a journal
		// (a 6 GB transaction through the WAL writes everything twice)
		// and with a large page cache; WAL mode is restored at the end.
		for _, p := range []string{"journal_mode = OFF", "synchronous = OFF", "cache_size = -524288", "temp_store = MEMORY"} {
			if err := s.exec(ctx, "PRAGMA "+p); err != nil {
				return nil, fmt.Errorf("PRAGMA %s: %w", p, err)
			}
		}
		defer s.exec(context.Background(), "PRAGMA journal_mode = WAL")
	}
	if err := s.insert(ctx, "orgs", orgCols, [][]any{teamOrgRow(a.orgID, "Bench Audit Org", "bench-audit-"+randomHex(4), nowMicros())}); err != nil {
		return nil, err
	}
	// Entries span the last 365 days; an org's own entries are spread
	// evenly over that span, so "at" increases within each org.
	const span = int64(365 * 24 * time.Hour / time.Microsecond)
	end := nowMicros() - 1000
	chunks := auditChunks(a.orgID, orgRows, total, others)
	// SQLite has one writer; PostgreSQL takes one connection per core.
	conns := []*seedDB{s}
	if s.pg != nil {
		for range min(4, runtime.NumCPU()) - 1 {
			c, err := openSeedDB(ctx, d)
			if err != nil {
				return nil, err
			}
			defer c.Close()
			conns = append(conns, c)
		}
	}
	if err := fillAudit(ctx, conns, chunks, end, span); err != nil {
		return nil, err
	}
	if s.pg != nil {
		// A real log this size has statistics; autovacuum would gather
		// them in the middle of the measurement otherwise.
		if err := s.exec(ctx, "ANALYZE audit_log"); err != nil {
			return nil, err
		}
		a.analyzed = true
	}
	a.took = time.Since(began)
	return a, nil
}

// auditChunk is one org's share of the seeded audit log.
type auditChunk struct {
	org  string
	num  int // the org's number, in the derived ids
	rows int
}

// auditChunks gives orgRows entries to orgID and spreads the rest of total
// evenly over others derived org ids.
func auditChunks(orgID string, orgRows, total, others int) []auditChunk {
	chunks := []auditChunk{{orgID, 0, orgRows}}
	rest := total - orgRows
	for i := range others {
		n := rest / others
		if i < rest%others {
			n++
		}
		if n > 0 {
			chunks = append(chunks, auditChunk{fmt.Sprintf("%08x-0000-4000-8000-%012x", i+1, 0xa0d17), i + 1, n})
		}
	}
	return chunks
}

// fillAudit writes the chunks over conns at once, each org's entries spread
// evenly over the span before end.
func fillAudit(ctx context.Context, conns []*seedDB, chunks []auditChunk, end, span int64) error {
	work := make(chan auditChunk)
	errs := make(chan error, len(conns))
	for _, c := range conns {
		go func() {
			for ch := range work {
				step := max(1, span/int64(ch.rows))
				start := end - step*int64(ch.rows)
				if err := c.auditChunk(ctx, ch.org, ch.num, ch.rows, start, step); err != nil {
					errs <- fmt.Errorf("seed audit log: %w", err)
					for range work { // drain
					}
					return
				}
			}
			errs <- nil
		}()
	}
	for _, ch := range chunks {
		if ctx.Err() != nil {
			break
		}
		work <- ch
	}
	close(work)
	var seedErr error
	for range conns {
		seedErr = errors.Join(seedErr, <-errs)
	}
	if seedErr == nil {
		seedErr = ctx.Err()
	}
	return seedErr
}

// auditChunk inserts n entries of one org with one INSERT … SELECT over a
// generated series, computed inside the database.
func (s *seedDB) auditChunk(ctx context.Context, org string, num, n int, start, step int64) error {
	k := len(auditTools)
	var toolCase, objCase strings.Builder
	for i, t := range auditTools {
		fmt.Fprintf(&toolCase, " WHEN %d THEN '%s'", i, t.tool)
		fmt.Fprintf(&objCase, " WHEN %d THEN '%s'", i, t.object)
	}
	// i: the entry's number within the org; tool rotates with i, the verb
	// and the actor (one of 50) vary more slowly.
	if s.pg != nil {
		q := fmt.Sprintf(`INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at)
			SELECT lpad(to_hex($2::bigint), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(i), 12, '0'),
				$1,
				CASE i %% %[1]d%[2]s END,
				CASE i %% %[1]d%[2]s END || '.' || CASE i %% %[1]d%[3]s END || '.' || CASE (i / %[1]d) %% 3 WHEN 0 THEN 'created' WHEN 1 THEN 'updated' ELSE 'deleted' END,
				'00000000-0000-4000-a000-' || lpad(to_hex((i / 7) %% 50), 12, '0'),
				CASE i %% %[1]d%[3]s END,
				lpad(to_hex($2::bigint), 8, '0') || '-0000-4000-b000-' || lpad(to_hex(i / 3), 12, '0'),
				'{}',
				$3::bigint + i * $4::bigint
			FROM generate_series(0::bigint, $5::bigint - 1) AS i`, k, toolCase.String(), objCase.String())
		return s.exec(ctx, q, org, num, start, step, n)
	}
	q := fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < $5)
		INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at)
		SELECT printf('%%08x-0000-4000-8000-%%012x', $2, i),
			$1,
			CASE i %% %[1]d%[2]s END,
			CASE i %% %[1]d%[2]s END || '.' || CASE i %% %[1]d%[3]s END || '.' || CASE (i / %[1]d) %% 3 WHEN 0 THEN 'created' WHEN 1 THEN 'updated' ELSE 'deleted' END,
			printf('00000000-0000-4000-a000-%%012x', (i / 7) %% 50),
			CASE i %% %[1]d%[3]s END,
			printf('%%08x-0000-4000-b000-%%012x', $2, i / 3),
			'{}',
			$3 + i * $4
		FROM s`, k, toolCase.String(), objCase.String())
	return s.exec(ctx, q, org, num, start, step, n)
}

// sqliteSize returns the size of the SQLite file and its WAL, for the log.
func sqliteSize(dbURL string) string {
	path := strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "//")
	var parts []string
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			parts = append(parts, fmt.Sprintf("%s %.0f MiB", p[strings.LastIndexByte(p, '/')+1:], float64(st.Size())/(1<<20)))
		}
	}
	return strings.Join(parts, ", ")
}

// skipError marks a target that cannot run here; it is reported, not
// counted as a failure.
type skipError struct{ reason string }

func (e *skipError) Error() string { return "skipped: " + e.reason }

func skipf(format string, args ...any) error { return &skipError{fmt.Sprintf(format, args...)} }

func isSkip(err error) (string, bool) {
	var s *skipError
	if errors.As(err, &s) {
		return s.reason, true
	}
	return "", false
}
