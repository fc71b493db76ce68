package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// TestKillNineKeepsRefreshes runs the real binary on each database under a
// load of refreshes, which queue into batches (one commit for many), and
// kills it with SIGKILL in the middle. Every rotation a client was
// answered must be in the database afterwards, and none twice: the token
// each answer replaced is in the history once, and each answered token is
// either its session's live one or was rotated once more by a refresh the
// kill cut before its answer (at most one per client, which waits for each
// answer). So a batch answers no member before its commit.
func TestKillNineKeepsRefreshes(t *testing.T) {
	// Mostly waiting on processes and timers: the package's slowest tests
	// overlap instead of adding up.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := binary(t, t.TempDir())
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "g.db")
		killRefreshes(t, bin, "sqlite:"+path, func() (*sql.DB, error) { return sql.Open("sqlite", "file:"+path) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := testenv.FreshURL(t, "postgres")
		killRefreshes(t, bin, url, func() (*sql.DB, error) { return sql.Open("pgx", url) })
	})
}

// chain is one client's refreshes: the tokens it held, in order; each
// after the first was answered by a refresh of the one before.
type chain struct{ tokens []string }

func killRefreshes(t *testing.T, bin, dbURL string, open func() (*sql.DB, error)) {
	const clients = 24
	p := startBinary(t, bin, map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:0", "GATEHOUSE_DATABASE_URL": dbURL, "GATEHOUSE_RATE_LIMIT": "off"})
	email := testenv.Email()
	chains := make([]*chain, clients)
	chains[0] = &chain{[]string{p.call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"})["refresh_token"].(string)}}
	for i := 1; i < clients; i++ {
		chains[i] = &chain{[]string{p.call(t, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": "password-1"})["refresh_token"].(string)}}
	}
	var answered atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range chains {
		wg.Go(func() {
			for {
				b, _ := json.Marshal(map[string]string{"refresh_token": c.tokens[len(c.tokens)-1]})
				res, err := client.Post(p.base+"/v1/auth/refresh", "application/json", bytes.NewReader(b))
				if err != nil {
					return // killed
				}
				var out struct {
					RefreshToken string `json:"refresh_token"`
				}
				err = json.NewDecoder(res.Body).Decode(&out)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || err != nil || out.RefreshToken == "" {
					t.Errorf("refresh: status %d, %v", res.StatusCode, err)
					return
				}
				c.tokens = append(c.tokens, out.RefreshToken)
				answered.Add(1)
			}
		})
	}
	for end := time.Now().Add(time.Minute); answered.Load() < 300 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
	}
	p.cmd.Process.Kill() // SIGKILL mid-load: no drain, no flush
	p.cmd.Wait()
	wg.Wait()
	if answered.Load() < 300 {
		t.Fatalf("only %d refreshes answered before the kill", answered.Load())
	}

	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, c := range chains {
		for k, secret := range c.tokens {
			hash := token.Hash(secret)
			var live, rotated int
			if err := db.QueryRow(`SELECT (SELECT count(*) FROM sessions WHERE refresh_hash = $1), (SELECT count(*) FROM refresh_history WHERE token_hash = $1)`, hash).
				Scan(&live, &rotated); err != nil {
				t.Fatal(err)
			}
			last := k == len(c.tokens)-1
			switch {
			case !last && (rotated != 1 || live != 0):
				t.Errorf("client %d token %d of %d, whose refresh was answered: live %d, in the history %d times; want rotated once", i, k, len(c.tokens), live, rotated)
			case last && live+rotated != 1:
				t.Errorf("client %d's last answered token: live %d, in the history %d times; want one of them once", i, live, rotated)
			}
		}
	}
	t.Logf("%d refreshes answered before the kill", answered.Load())
}
