package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
)

// The bench's server runs with GATEHOUSE_WEB_URL=http://localhost (an IP
// cannot be a WebAuthn relying party id), so its passkeys are this RP's.
const (
	passkeyOrigin = "http://localhost"
	passkeyRPID   = "localhost"
	// passkeySignIns is how many sign-ins are prepared: each ceremony is
	// single use, so the target is finite (about 12 s at 5,000/s, enough
	// for -warmup 2s -d 10s on a fast day; 20,000 ran out in 4 s).
	passkeySignIns = 60_000
)

// passkeys is the passkey target's state: a finish body per request, each
// answering its own ceremony, taken in order.
type passkeys struct {
	url    string
	bodies [][]byte
	warm   int
	next   atomic.Int64
}

func (s *passkeys) notes() (info, problems []string) {
	used := min(int(s.next.Load()), len(s.bodies))
	return []string{fmt.Sprintf("%d ceremonies begun and signed beforehand; %d finished in an untimed warm-up, %d during the run",
		len(s.bodies), s.warm, used-s.warm)}, nil
}

// passkeyTarget measures "POST /v1/auth/passkey/finish": a usernameless
// sign-in by a passkey (a synced one, sign count 0) registered for the
// bench user, each request finishing a ceremony begun before the timer.
// Only the finish is timed: the signature check, the ceremony used once,
// the passkey's use recorded and a session opened.
func passkeyTarget() target {
	t := newTarget("passkey_signin", setupPasskeys,
		func(_ int, s *passkeys) (*http.Request, error) {
			i := s.next.Add(1) - 1
			if i >= int64(len(s.bodies)) {
				return nil, errExhausted
			}
			return postJSON(s.url, s.bodies[i])
		}, nil)
	t.finite = true
	return t
}

// setupPasskeys registers a passkey for the bench user, begins every
// ceremony and signs its assertion, and finishes a few untimed.
func setupPasskeys(ctx context.Context, e *env) (*passkeys, error) {
	token := e.user.session.AccessToken
	var reg passkeytest.Options
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/me/passkeys/begin", token, nil, &reg); err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: passkeys are not in this build", why)
		}
		return nil, err
	}
	auth := passkeytest.New(passkeyOrigin, passkeyRPID)
	cred, att, err := auth.Create(&reg)
	if err != nil {
		return nil, err
	}
	finish := map[string]any{"ceremony_id": reg.CeremonyID, "credential": att}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/me/passkeys/finish", token, finish, nil); err != nil {
		return nil, fmt.Errorf("register the passkey: %w", err)
	}
	s := &passkeys{url: e.baseURL + "/v1/auth/passkey/finish", bodies: make([][]byte, passkeySignIns)}
	e.logf("beginning %d passkey sign-ins", passkeySignIns)
	began := time.Now()
	err = parallel(ctx, passkeySignIns, 8, func(i int) error {
		var o passkeytest.Options
		if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/auth/passkey/begin", "", nil, &o); err != nil {
			return err
		}
		body, err := json.Marshal(map[string]any{"ceremony_id": o.CeremonyID, "credential": auth.Assert(cred, o.Challenge())})
		s.bodies[i] = body
		return err
	})
	if err != nil {
		return nil, err
	}
	e.logf("began and signed %d in %v", passkeySignIns, time.Since(began).Round(100*time.Millisecond))
	s.warm = 200
	warm := newClient(e.workers, time.Minute)
	defer warm.CloseIdleConnections()
	err = parallel(ctx, s.warm, e.workers, func(i int) error {
		req, err := postJSON(s.url, s.bodies[i])
		if err != nil {
			return err
		}
		res, err := warm.Do(req.WithContext(ctx))
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("warm-up passkey sign-in: status %d", res.StatusCode)
		}
		return nil
	})
	s.next.Store(int64(s.warm))
	return s, err
}
