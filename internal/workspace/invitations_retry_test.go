package workspace_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// againStore runs each transaction's function twice, the first run rolled
// back, as the store runs again a transaction PostgreSQL aborted (a
// deadlock victim).
type againStore struct{ workspace.Store }

var errRunAgain = errors.New("run again")

func (s againStore) Tx(ctx context.Context, fn func(tx workspace.Store) error) error {
	err := s.Store.Tx(ctx, func(tx workspace.Store) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errRunAgain
	})
	if !errors.Is(err, errRunAgain) {
		return err
	}
	return s.Store.Tx(ctx, fn)
}

// TestInviteRunAgainAnswersOnce: invitations made by a transaction run a
// second time are answered once, the committed run's, not with the links
// of the rolled-back run, whose secrets were never stored.
func TestInviteRunAgainAnswersOnce(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		ws := workspace.New(workspace.Config{Store: againStore{env.SQL.Workspace()}, WebURL: "http://web.test", NoMailLimits: true})
		p := &gatehouse.Principal{UserID: owner.UserID, OrgID: org, Role: workspace.RoleOwner, Via: gatehouse.ViaPassword}
		invs, _, err := ws.Invite(context.Background(), p, org, workspace.InviteInput{Kind: workspace.InviteLink})
		if err != nil {
			t.Fatal(err)
		}
		var stored int
		if err := env.SQL.DB().QueryRow(`SELECT count(*) FROM invitations WHERE org_id = $1`, org).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if len(invs) != 1 || stored != 1 {
			t.Fatalf("answered %d invitations, stored %d; want 1 and 1", len(invs), stored)
		}
		var hash string
		if err := env.SQL.DB().QueryRow(`SELECT token_hash FROM invitations WHERE org_id = $1`, org).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if got := token.Hash(testenv.InviteToken(t, invs[0].URL)); got != hash {
			t.Error("the answered link is not the stored invitation's")
		}
	})
}
