package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Tool-API requests check the caller's live standing in the token's
// workspace (issue 10 item 3), cached for at most 2 s: past that window a
// removed member, a deleted account, a deleted org or a revoked org key
// can no longer use a token minted before the change.

// pastStandingCache is more than the 2-second membership cache.
const pastStandingCache = 3 * time.Second

// toolCall is one tool-API request; send makes it with a bearer token.
type toolCall struct {
	name string
	send func(t *testing.T, token string) *testenv.Resp
}

// toolCalls are a read and a write of each tool API in org, whose team
// (the caller must be in it) and form are given.
func toolCalls(env *testenv.Env, team, form string) []toolCall {
	json := func(name, method, path string, body any) toolCall {
		return toolCall{name, func(t *testing.T, tok string) *testenv.Resp { return env.Do(t, method, path, tok, body) }}
	}
	doc := map[string]any{"name": "Lease", "recipients": []map[string]any{{"name": "Ada", "email": "ada@example.com"}}}
	return []toolCall{
		json("tasks read", "GET", "/tasks/v1/issues?teamId="+team, nil),
		json("tasks write", "POST", "/tasks/v1/issues", map[string]any{"teamId": team, "title": "Ship it"}),
		json("forms submissions read", "GET", "/forms/v1/forms/"+form+"/submissions", nil),
		json("forms destination create", "POST", "/forms/v1/forms/"+form+"/destinations",
			map[string]any{"type": "email", "config": map[string]any{"to": []string{"drop-" + testenv.RandomHex(3) + "@example.com"}}}),
		json("links create", "POST", "/links/v1/links", map[string]any{"destinationUrl": "https://example.com/x"}),
		json("links webhook create", "POST", "/links/v1/webhooks", map[string]any{"url": "https://127.0.0.1:9/hook"}),
		json("sign read", "GET", "/sign/v1/documents", nil),
		{"sign write", func(t *testing.T, tok string) *testenv.Resp { return env.CreateDocument(t, tok, testenv.TestPDF, doc) }},
	}
}

// wantToolCalls makes every call with tok and checks the status; a refusal
// must carry {error}.
func wantToolCalls(t *testing.T, calls []toolCall, tok string, want int) {
	t.Helper()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			r := c.send(t, tok)
			if r.Status != want {
				t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, want)
			}
			if want >= 400 && r.Str("error") == "" {
				t.Errorf("body %s; want {error}", r.Body)
			}
		})
	}
}

// TestToolAPIsRemovedMember: a member's session, personal-key and OAuth
// tokens stop working on every tool API once they are removed from the
// org (401: the removal revokes the tokens minted before it, issue 13
// item 7); a member who stays keeps working.
func TestToolAPIsRemovedMember(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		team := env.CreateTeam(t, owner.Token, org, "Platform")
		form := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		member := env.Join(t, owner, org, "member")
		env.Do(t, "POST", "/v1/orgs/"+org+"/teams/"+team+"/members", owner.Token, map[string]string{"user_id": member.UserID, "role": "member"}).Want(t, 200)
		secret := env.Do(t, "POST", "/v1/me/api-keys", member.Token, map[string]any{"name": "laptop", "org_id": org}).Want(t, 200).Str("api_key.secret")
		tokens := map[string]string{
			"session":      member.Token,
			"personal key": env.Exchange(t, secret).Want(t, 200).Str("access_token"),
			"oauth":        env.ForgeToken(t, member.Token, token.Claims{Via: "oauth", Org: token.OrgClaim{ID: org, Role: "member", Tools: workspace.Tools}}),
		}
		calls := toolCalls(env, team, form)
		for name, tok := range tokens {
			t.Run("member "+name, func(t *testing.T) { wantToolCalls(t, calls, tok, 200) })
		}

		env.Do(t, "DELETE", "/v1/orgs/"+org+"/members/"+member.UserID, owner.Token, nil).Want(t, 200)
		env.Clock.Advance(pastStandingCache)
		for name, tok := range tokens {
			t.Run("removed "+name, func(t *testing.T) { wantToolCalls(t, calls, tok, 401) })
		}
		t.Run("owner still in the org", func(t *testing.T) { wantToolCalls(t, calls, owner.Token, 200) })
	})
}

// TestToolAPIsDeletedAccountOrgAndKey: a deleted account's token and a
// revoked org key's token answer 401 on the tool APIs (with the resource
// metadata challenge); so do the tokens of a deleted org's members and
// keys (revoked with it, issue 13 item 7).
func TestToolAPIsDeletedAccountOrgAndKey(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		leaver := env.Join(t, owner, org, "admin")
		keep := env.CreateOrgKey(t, owner.Token, org, map[string]any{"name": "ci", "role": "member"}).Str("api_key.secret")
		revoked := env.CreateOrgKey(t, owner.Token, org, map[string]any{"name": "old ci", "role": "member"})
		keyTok := env.Exchange(t, revoked.Str("api_key.secret")).Want(t, 200).Str("access_token")
		keptTok := env.Exchange(t, keep).Want(t, 200).Str("access_token")
		for _, tok := range []string{leaver.Token, keyTok, keptTok} {
			env.Do(t, "GET", "/links/v1/links", tok, nil).Want(t, 200)
		}

		env.Do(t, "DELETE", "/v1/me", leaver.Token, nil).Want(t, 200)
		env.Do(t, "DELETE", "/v1/orgs/"+org+"/api-keys/"+revoked.Str("api_key.id"), owner.Token, nil).Want(t, 200)
		env.Clock.Advance(pastStandingCache)
		for name, tok := range map[string]string{"deleted account": leaver.Token, "revoked org key": keyTok} {
			t.Run(name, func(t *testing.T) {
				r := env.Do(t, "POST", "/links/v1/links", tok, map[string]any{"destinationUrl": "https://example.com/y"}).Want(t, 401)
				if !strings.Contains(r.Header.Get("WWW-Authenticate"), "resource_metadata=") || r.Str("error") == "" {
					t.Errorf("401 with WWW-Authenticate %q, body %s; want the resource metadata pointer and {error}", r.Header.Get("WWW-Authenticate"), r.Body)
				}
			})
		}
		t.Run("live org key", func(t *testing.T) { env.Do(t, "GET", "/links/v1/links", keptTok, nil).Want(t, 200) })

		env.Do(t, "DELETE", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200)
		env.Clock.Advance(pastStandingCache)
		for name, tok := range map[string]string{"owner of a deleted org": owner.Token, "key of a deleted org": keptTok} {
			t.Run(name, func(t *testing.T) { env.Do(t, "GET", "/links/v1/links", tok, nil).Want(t, 401) })
		}
	})
}

// TestToolAPIsStandingCache: the standing is read at most every 2 s per
// token subject and org, so a membership deleted behind the service's back
// shows within 2 s (404); a removal through the service revokes the
// member's tokens at once (401).
func TestToolAPIsStandingCache(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		env.Do(t, "GET", "/links/v1/links", member.Token, nil).Want(t, 200)
		// Behind the service's back, as another instance would.
		env.Exec(t, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, org, member.UserID)
		env.Do(t, "GET", "/links/v1/links", member.Token, nil).Want(t, 200)
		env.Clock.Advance(2 * time.Second)
		env.Do(t, "GET", "/links/v1/links", member.Token, nil).Want(t, 404)

		other := env.Join(t, owner, org, "member")
		env.Do(t, "GET", "/links/v1/links", other.Token, nil).Want(t, 200)
		env.Do(t, "DELETE", "/v1/orgs/"+org+"/members/"+other.UserID, owner.Token, nil).Want(t, 200)
		env.Do(t, "GET", "/links/v1/links", other.Token, nil).Want(t, 401)
	})
}
