package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPendingPrincipal: the hosted step page reads the pending sign-in of
// its cookie without rotating it; a token of a session past its step, of
// a session owing nothing, rotated, revoked, expired or unknown is 401.
func TestPendingPrincipal(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		m := withTOTP(t, env)
		rt := pendingLogin(t, env, m).Str("refresh_token")
		for range 2 { // reading does not rotate
			p, err := env.Svc.PendingPrincipal(ctx, rt)
			if err != nil {
				t.Fatal(err)
			}
			if p.UserID != m.UserID || p.SessionID == "" || !p.Pending || p.Via != gatehouse.ViaPassword || p.AAL != gatehouse.AAL1 {
				t.Fatalf("principal = %+v; want the pending aal1 password session of %s", p, m.UserID)
			}
		}
		p, _ := env.Svc.PendingPrincipal(ctx, rt)
		si, err := env.Svc.SecondFactor(ctx, p, identity.Step{Method: identity.FactorTOTP, Code: totpAt(t, env, m.Secret, 0)}, gatehouse.SessionMeta{})
		if err != nil {
			t.Fatalf("step with the page's principal: %v", err)
		}
		plain := env.Register(t)
		rotated := pendingLogin(t, env, m).Str("refresh_token")
		env.Refresh(t, rotated).Want(t, 200)
		revoked := pendingLogin(t, env, m).Str("refresh_token")
		if err := env.Svc.Logout(ctx, revoked); err != nil {
			t.Fatal(err)
		}
		for name, secret := range map[string]string{
			"used by the step": rt, "the aal2 session": si.RefreshToken, "no factor owed": plain.Refresh,
			"rotated": rotated, "signed out": revoked, "unknown": "gh_rt_nothing", "empty": "",
		} {
			if _, err := env.Svc.PendingPrincipal(ctx, secret); gatehouse.ErrorKind(err) != gatehouse.KindUnauthorized {
				t.Errorf("%s: err = %v; want 401", name, err)
			}
		}
		expiring := pendingLogin(t, env, m).Str("refresh_token")
		env.Clock.Advance(identity.MFAPendingTTL + time.Second)
		if _, err := env.Svc.PendingPrincipal(ctx, expiring); gatehouse.ErrorKind(err) != gatehouse.KindUnauthorized {
			t.Fatalf("expired: err = %v; want 401", err)
		}
	})
}
