package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// The starve job: one workspace floods the job engine with webhook
// deliveries to a receiver that never answers, and other people's sign-in
// links must still reach the SMTP sink at once (issue 24: p99 under 1 s).
const (
	starveHooks = 500 // webhooks of the flooding workspace
	starveLinks = 100 // links it creates: starveHooks deliveries each
	starveMails = 100 // sign-in links asked for afterwards
	// starvePace is the wait between two sign-in link requests.
	starvePace = 20 * time.Millisecond
)

// tarpit accepts TCP connections and never writes a byte, holding each
// until closed: a webhook receiver that never answers, not even TLS.
type tarpit struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startTarpit() (*tarpit, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &tarpit{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
		}
	}()
	return p, nil
}

// accepted is how many connections it has taken.
func (p *tarpit) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *tarpit) close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// runStarve registers starveHooks Links webhooks of the bench user's
// workspace at a tarpit (through the API up to the per-workspace cap, the
// rest copied straight in the database, as a workspace registered before
// the cap would have them), creates starveLinks links (starveHooks x
// starveLinks deliveries queued), then asks starveMails sign-in links for
// fresh addresses, one every starvePace, and measures from each request
// to its mail's arrival at the SMTP sink.
func (b *bench) runStarve(ctx context.Context, bin, db string) error {
	sink, err := startMailSink()
	if err != nil {
		return err
	}
	defer sink.close()
	pit, err := startTarpit()
	if err != nil {
		return err
	}
	defer pit.close()
	js, stop, err := b.startJobServer(ctx, bin, db, "starve", []string{"GATEHOUSE_SMTP_URL=" + sink.url(), "GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true"})
	if err != nil {
		return err
	}
	defer stop()
	waitArrived(ctx, sink.count, 1, 30*time.Second) // the bench user's own mail
	tok := js.user.session.AccessToken
	viaAPI, err := starveWebhooks(ctx, js, tok, "https://"+pit.l.Addr().String()+"/hook")
	if err != nil {
		return err
	}
	b.log.Printf("%s: starve: %d webhooks at a tarpit (%d through the API); creating %d links", db, starveHooks, viaAPI, starveLinks)
	for range starveLinks {
		if err := callAs(ctx, js.client, http.MethodPost, js.url+"/links/v1/links", tok, map[string]any{"destinationUrl": "https://example.com/starve"}, nil); err != nil {
			return fmt.Errorf("create link: %w", err)
		}
	}
	backlog, err := pendingDeliveries(ctx, js)
	if err != nil {
		return err
	}
	b.log.Printf("%s: starve: %d deliveries queued, %d tarpit connections; asking %d sign-in links", db, backlog, pit.accepted(), starveMails)
	run := randomHex(4)
	asked := map[string]time.Time{}
	from := time.Now()
	var errs uint64
	for i := range starveMails {
		to := fmt.Sprintf("starve-%s-%d@example.com", run, i)
		start := time.Now()
		if err := callAs(ctx, js.client, http.MethodPost, js.url+"/v1/auth/magic-link", "", map[string]string{"email": to}, nil); err != nil {
			errs++
			b.log.Printf("%s: starve: magic link: %v", db, err)
		} else {
			asked[to] = start
		}
		time.Sleep(starvePace)
	}
	drain := waitArrived(ctx, func() int { return sink.arrivedOf(asked) }, len(asked), time.Minute)
	row := jobRow{Job: "starve", DB: db, Seconds: time.Since(from).Seconds() - drain.Seconds(), Requests: uint64(len(asked)),
		Errors: errs, DrainSeconds: drain.Seconds(), Backlog: backlog, TarpitConns: pit.accepted()}
	row.RequestsPS = float64(row.Requests) / row.Seconds
	h := newHistogram()
	for to, at := range asked {
		got, ok := sink.arrivedAt(to)
		if !ok {
			row.Missing++
			continue
		}
		row.Done++
		h.record(got.Sub(at))
	}
	row.DonePerSec = float64(row.Done) / row.Seconds
	row.P50MS, row.P99MS = ms(h.percentile(50)), ms(h.percentile(99))
	b.addJob(row, js.srv)
	return js.srv.died()
}

// starveWebhooks registers starveHooks webhooks at url: through the API
// until it refuses (the per-workspace cap), the rest as copies of the
// first in the database. It returns how many the API took.
func starveWebhooks(ctx context.Context, js *jobServer, tok, url string) (int, error) {
	var first string
	n := 0
	for ; n < starveHooks; n++ {
		var out struct {
			Webhook struct {
				ID string `json:"id"`
			} `json:"webhook"`
		}
		err := callAs(ctx, js.client, http.MethodPost, js.url+"/links/v1/webhooks", tok, map[string]any{"url": url, "events": []string{"link.created"}}, &out)
		var he *httpError
		if errors.As(err, &he) && he.status == http.StatusConflict && n > 0 {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("create webhook: %w", err)
		}
		if first == "" {
			first = out.Webhook.ID
		}
	}
	if n < starveHooks {
		sdb, err := openSeedDB(ctx, &dbInfo{kind: js.db, url: js.dbURL})
		if err != nil {
			return 0, err
		}
		defer sdb.Close()
		for range starveHooks - n {
			if err := sdb.exec(ctx, `INSERT INTO webhooks (id, org_id, tool, url, events, secret, active, failures, created_by, created_at, updated_at)
				SELECT $1, org_id, tool, url, events, secret, active, failures, created_by, created_at, updated_at FROM webhooks WHERE id = $2`,
				uuid.Must(uuid.NewV7()).String(), first); err != nil {
				return 0, fmt.Errorf("copy webhook: %w", err)
			}
		}
	}
	// Wait out the read cache (2 s) until the API lists them all.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var list struct {
			Webhooks []any `json:"webhooks"`
		}
		if err := callAs(ctx, js.client, http.MethodGet, js.url+"/links/v1/webhooks", tok, nil, &list); err != nil {
			return 0, err
		}
		if len(list.Webhooks) == starveHooks {
			return n, nil
		}
		if time.Now().After(end) {
			return 0, fmt.Errorf("%d webhooks listed; want %d", len(list.Webhooks), starveHooks)
		}
	}
}

// pendingDeliveries counts the webhook deliveries not yet finished.
func pendingDeliveries(ctx context.Context, js *jobServer) (int, error) {
	db, err := openSeedDB(ctx, &dbInfo{kind: js.db, url: js.dbURL})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	q := `SELECT COUNT(*) FROM river_job WHERE kind = 'webhook.delivery' AND state IN ('available', 'running', 'retryable', 'scheduled', 'pending')`
	var n int
	if db.pg != nil {
		err = db.pg.QueryRow(ctx, q).Scan(&n)
	} else {
		err = db.sq.QueryRowContext(ctx, q).Scan(&n)
	}
	return n, err
}
