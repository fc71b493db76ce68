package identity_test

import (
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// postAtOnce sends n POSTs to path at the same moment, body(i) being the
// i-th body, and returns the answers once all are in; each is checked by
// testenv.CheckAnswer on the test goroutine.
func postAtOnce(t *testing.T, env *testenv.Env, n int, path string, body func(i int) any) []*testenv.Resp {
	t.Helper()
	out := make([]*testenv.Resp, n)
	errs := make([]error, n)
	testenv.AtOnce(n, func(i int) { out[i], errs[i] = env.Try("POST", path, "", body(i)) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d to %s: %v", i, path, err)
		}
		testenv.CheckAnswer(t, fmt.Sprintf("concurrent POST %s #%d", path, i), out[i])
	}
	return out
}

// countStatus counts answers by status.
func countStatus(rs []*testenv.Resp) map[int]int {
	m := map[int]int{}
	for _, r := range rs {
		m[r.Status]++
	}
	return m
}

// oneWinner returns the one 200 answer after checking the rest are 401.
func oneWinner(t *testing.T, rs []*testenv.Resp) *testenv.Resp {
	t.Helper()
	counts := countStatus(rs)
	if counts[200] != 1 || counts[401] != len(rs)-1 {
		t.Fatalf("statuses of %d concurrent uses = %v; want exactly one 200 and %d × 401", len(rs), counts, len(rs)-1)
	}
	for _, r := range rs {
		if r.Status == 200 {
			return r
		}
	}
	return nil
}

func TestSigninRaceMagicLink(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		tok := env.MagicToken(t, email)
		rs := postAtOnce(t, env, 20, "/v1/auth/magic-link/verify", func(int) any { return map[string]string{"token": tok} })
		w := oneWinner(t, rs)
		env.CheckSession(t, w, testenv.Session{Email: email, Verified: true, Via: "magic_link"})
		env.Refresh(t, w.Str("refresh_token")).Want(t, 200)
	})
}

func TestSigninRaceVerifyEmail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		tok := env.MailToken(t, a.Email, testenv.VerifyLink)
		rs := postAtOnce(t, env, 20, "/v1/auth/verify-email", func(int) any { return map[string]string{"token": tok} })
		w := oneWinner(t, rs)
		if got := w.Get("user.email_verified"); got != true {
			t.Errorf("winner user.email_verified = %v; want true", got)
		}
	})
}

func TestSigninRaceRefresh(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		rs := postAtOnce(t, env, 20, "/v1/auth/refresh", func(int) any { return map[string]string{"refresh_token": a.Refresh} })
		w := oneWinner(t, rs)
		env.CheckSession(t, w, testenv.Session{Email: a.Email, Name: a.Name, Via: "refresh", UserID: a.UserID, OrgID: a.OrgID})
		// Every reuse came within 10 s of the rotation: two tabs racing, not
		// theft, so the session lives on.
		next := env.Refresh(t, w.Str("refresh_token")).Want(t, 200)
		env.Refresh(t, next.Str("refresh_token")).Want(t, 200)
	})
}

// Two magic links requested for one new address and opened at once: each is
// a valid, unused link, so each signs in, and both land in one account.
func TestSigninRaceMagicLinkSignup(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		const n = 5
		toks := make([]string, n)
		for i := range toks {
			toks[i] = env.MagicToken(t, email)
		}
		rs := postAtOnce(t, env, n, "/v1/auth/magic-link/verify", func(i int) any { return map[string]string{"token": toks[i]} })
		ids := map[string]bool{}
		for i, r := range rs {
			if r.Status != 200 {
				t.Errorf("link %d of %d for one new address opened at once: status = %d, body %s; want 200", i, n, r.Status, r.Body)
				continue
			}
			ids[r.Str("user.id")] = true
		}
		if len(ids) > 1 {
			t.Errorf("links for one address made %d accounts %v; want one", len(ids), ids)
		}
	})
}

func TestSigninRaceRegister(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		rs := postAtOnce(t, env, 20, "/v1/auth/register", func(int) any { return map[string]string{"email": email, "password": "password-1"} })
		if counts := countStatus(rs); counts[200] != 1 || counts[409] != 19 {
			t.Fatalf("statuses of 20 concurrent registrations of one address = %v; want one 200 and 19 × 409", counts)
		}
		env.Login(t, email, "password-1").Want(t, 200)
	})
}
