package workspace_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// Invitation mail limits (issue 10 item 4, docs/decisions.md): per rolling
// 24 h, 200 per account (10 until its address is verified) and 500 per org.
// Every test here runs with GATEHOUSE_RATE_LIMIT off: these limits do not
// depend on it.

// inviteBody is an email invitation request for n fresh addresses.
func inviteBody(n int) map[string]any {
	emails := make([]string, n)
	for i := range emails {
		emails[i] = "invitee-" + testenv.RandomHex(5) + "@example.com"
	}
	return map[string]any{"emails": emails}
}

// inviteRefused checks a refusal past a limit: 429 with exactly {error}
// naming words and Retry-After of wait; it returns the wait.
func inviteRefused(t *testing.T, r *testenv.Resp, wait time.Duration, words ...string) time.Duration {
	t.Helper()
	r.Want(t, 429)
	testenv.CheckError(t, "invitation past the limit", r)
	testenv.ErrorNames(words...)(t, r)
	if got := r.Header.Get("Retry-After"); got != strconv.Itoa(int(wait.Seconds())) {
		t.Errorf("Retry-After = %q; want %d seconds", got, int(wait.Seconds()))
	}
	return wait
}

// orgInvitations counts org's invitation rows.
func orgInvitations(t *testing.T, env *testenv.Env, org string) int {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM invitations WHERE org_id = $1`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// seedInvitationMails stores n email invitations of org from inviter,
// created at at, as earlier requests would have.
func seedInvitationMails(t *testing.T, env *testenv.Env, org, inviter string, n int, at time.Time) {
	t.Helper()
	for range n {
		env.Exec(t, `INSERT INTO invitations (id, org_id, kind, role, email, token_hash, inviter_id, created_at, expires_at)
			VALUES ($1, $2, 'email', 'member', $3, $4, $5, $6, $7)`, uuid.NewString(), org, testenv.Email(), testenv.RandomHex(32),
			inviter, at.UnixMicro(), at.Add(14*24*time.Hour).UnixMicro())
	}
}

// TestInvitationMailLimitUnverified: an unverified sender gets 10 a day;
// a request that would pass it creates and sends nothing; link invitations
// send no mail and are not counted; after 24 h it works again.
func TestInvitationMailLimitUnverified(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		p := "/v1/orgs/" + org + "/invitations"
		env.Do(t, "POST", p, owner.Token, inviteBody(8)).Want(t, 200)

		refused := inviteBody(3)
		inviteRefused(t, env.Do(t, "POST", p, owner.Token, refused), 24*time.Hour, "10", "verified")
		if n := orgInvitations(t, env, org); n != 8 {
			t.Errorf("%d invitations after the refusal; want the 8 sent before", n)
		}
		if n := env.MailsTo(t, refused["emails"].([]string)[0]); n != 0 {
			t.Errorf("refused address got %d mails; want none", n)
		}

		env.Do(t, "POST", p, owner.Token, inviteBody(2)).Want(t, 200)
		env.Do(t, "POST", p, owner.Token, map[string]any{"kind": "link"}).Want(t, 200)
		env.Clock.Advance(30 * time.Minute)
		wait := inviteRefused(t, env.Do(t, "POST", p, owner.Token, inviteBody(1)), 23*time.Hour+30*time.Minute, "10")

		env.Clock.Advance(wait)
		fresh, _ := env.NewSession(t, owner) // the old token expired
		env.Do(t, "POST", p, fresh, inviteBody(10)).Want(t, 200)
		env.Clock.Advance(time.Minute)
		inviteRefused(t, env.Do(t, "POST", p, fresh, inviteBody(1)), 24*time.Hour-time.Minute, "10")
	})
}

// TestInvitationMailLimitVerified: a verified sender goes past 10, up to
// 200 a day; one request larger than the limit itself waits a whole day.
func TestInvitationMailLimitVerified(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		env.VerifyEmail(t, owner)
		org := env.CreateOrg(t, owner, "Verified "+testenv.RandomHex(3))
		p := "/v1/orgs/" + org + "/invitations"
		env.Do(t, "POST", p, owner.Token, inviteBody(20)).Want(t, 200)

		seedInvitationMails(t, env, org, owner.UserID, 170, env.Clock.Now().Add(-2*time.Hour))
		env.Do(t, "POST", p, owner.Token, inviteBody(10)).Want(t, 200)
		inviteRefused(t, env.Do(t, "POST", p, owner.Token, inviteBody(1)), 22*time.Hour, "200")
		other := env.CreateOrg(t, owner, "Other "+testenv.RandomHex(3))
		inviteRefused(t, env.Do(t, "POST", "/v1/orgs/"+other+"/invitations", owner.Token, inviteBody(1)), 22*time.Hour, "200")

		env.Clock.Advance(22 * time.Hour)
		fresh, _ := env.NewSession(t, owner)
		env.Do(t, "POST", p, fresh, inviteBody(100)).Want(t, 200)
		env.Do(t, "POST", p, fresh, inviteBody(70)).Want(t, 200)
		inviteRefused(t, env.Do(t, "POST", p, fresh, inviteBody(1)), 2*time.Hour, "200")
	})
}

// TestInvitationMailLimitPerOrg: the org's 500 a day are shared by all its
// admins, whatever each has sent.
func TestInvitationMailLimitPerOrg(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		admin := env.Join(t, owner, org, "admin") // one invitation from owner
		p := "/v1/orgs/" + org + "/invitations"
		for range 3 { // former admins
			seedInvitationMails(t, env, org, uuid.NewString(), 163, env.Clock.Now().Add(-time.Hour))
		}
		env.Do(t, "POST", p, owner.Token, inviteBody(5)).Want(t, 200) // 495 in all
		inviteRefused(t, env.Do(t, "POST", p, admin.Token, inviteBody(6)), 23*time.Hour, "500", "organization")
		env.Do(t, "POST", p, admin.Token, inviteBody(5)).Want(t, 200) // 500
		for _, u := range []*testenv.Account{admin, owner} {
			r := env.Do(t, "POST", p, u.Token, inviteBody(1))
			inviteRefused(t, r, 23*time.Hour, "500", "organization")
		}
		if n := orgInvitations(t, env, org); n != 500 {
			t.Errorf("org has %d invitations; want 500", n)
		}
		if !strings.Contains(env.Do(t, "POST", p, admin.Token, map[string]any{"kind": "link"}).Want(t, 200).Str("invitation.url"), "token=") {
			t.Errorf("link invitation without url")
		}
	})
}

// TestInvitationMailLimitOff: with the limits off (the test default, and
// GATEHOUSE_MAIL_LIMIT=off), an unverified sender is not held to 10.
func TestInvitationMailLimitOff(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, inviteBody(30)).Want(t, 200)
	})
}

// TestInvitationMailLimitRace: concurrent requests count each other's
// invitations (the org and the sender are locked), so the limit holds.
func TestInvitationMailLimitRace(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		ok := 0
		for _, r := range testenv.AtOnceAnswers(6, func(int) *testenv.Resp {
			return env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, inviteBody(4))
		}) {
			switch r.Status {
			case 200:
				ok++
			case 429:
			default:
				t.Errorf("status = %d, body %s; want 200 or 429", r.Status, r.Body)
			}
		}
		if n := orgInvitations(t, env, org); ok != 2 || n != 8 {
			t.Errorf("%d requests of 4 succeeded, %d invitations; want 2 and 8 (limit 10)", ok, n)
		}
	})
}
