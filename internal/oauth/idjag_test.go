package oauth_test

import (
	"context"
	"crypto/x509"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// idjagWorld is two Gatehouse instances with their own databases and
// keys: idp, the identity provider of a person, and as, the
// authorization server of the tasks API the person's AI client wants.
// The client is a client ID metadata document, the same id at both.
type idjagWorld struct {
	idp, as          *testenv.Env
	client, resource string
	idpOwner         *testenv.Account
	idpOrg           string
	person           *testenv.Account
}

func newIDJAGWorld(t *testing.T, idp *testenv.Env, o testenv.Options, client string) *idjagWorld {
	t.Helper()
	// A database of its own: on PostgreSQL, testenv.New would share idp's.
	db, err := sqlstore.Open(context.Background(), testenv.FreshURL(t, idp.DB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	o.DB = db
	w := &idjagWorld{idp: idp, as: testenv.New(t, idp.DB, o), client: client}
	w.resource = w.as.URL + "/tasks"
	domain := testenv.Domain()
	w.idpOwner, w.idpOrg = idp.Team(t)
	w.person = idp.VerifiedAt(t, domain)
	idp.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', 0)`, w.idpOrg, w.person.UserID)
	w.issuePolicy(t, []string{client})

	// At the authorization server: the same address, a member of a team
	// org whose OpenID Connect connection is the identity provider.
	as := w.as
	owner, org := as.Team(t)
	as.VerifiedDomain(t, owner.Token, org, domain, "")
	conn := as.Call(t, "POST", "/v1/orgs/"+org+"/sso", owner.Token, map[string]any{"name": "IdP", "issuer": idp.URL,
		"client_id": "gatehouse-as", "client_secret": "unused-here", "domains": []string{domain}}).Want(t, 200).Str("connection.id")
	uid := as.Do(t, "POST", "/v1/auth/register", "", map[string]string{"email": w.person.Email, "password": w.person.Password,
		"name": "Same Person"}).Want(t, 200).Str("user.id")
	as.VerifyEmail(t, &testenv.Account{Email: w.person.Email})
	as.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', 0)`, org, uid)
	as.Call(t, "PUT", "/v1/orgs/"+org+"/sso/idjag", owner.Token, map[string]any{"accept": map[string]any{"connections": []string{conn},
		"clients": []string{client}, "resources": []string{w.resource}, "scopes": []string{"tasks:read"}}}).Want(t, 200)
	return w
}

func (w *idjagWorld) issuePolicy(t *testing.T, clients []string) {
	t.Helper()
	w.idp.Call(t, "PUT", "/v1/orgs/"+w.idpOrg+"/sso/idjag", w.idpOwner.Token, map[string]any{"issue": map[string]any{"clients": clients,
		"audiences": []string{w.as.URL}, "resources": []string{w.resource}, "scopes": []string{"tasks:read"}}}).Want(t, 200)
}

// idToken runs the code flow with openid at the identity provider for
// client and returns the ID token.
func (w *idjagWorld) idToken(t *testing.T, client string) string {
	t.Helper()
	b := signedInBrowser(t, w.idp, w.person)
	verifier := oauth2.GenerateVerifier()
	authURL := oauthConfig(w.idp, client).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("scope", "openid email"))
	code := consentAt(t, b, authURL, w.idpOrg).Query().Get("code")
	return tokenPost(t, w.idp, exchangeForm(client, code, verifier)).Want(t, 200).Str("id_token")
}

// exchangeForm asks for an ID-JAG for the authorization server.
func (w *idjagWorld) exchangeForm(client, subject string) url.Values {
	return url.Values{"grant_type": {oauth.GrantTokenExchange}, "client_id": {client}, "subject_token": {subject},
		"subject_token_type": {oauth.TokenTypeIDToken}, "requested_token_type": {oauth.TokenTypeIDJAG}, "audience": {w.as.URL},
		"resource": {w.resource}, "scope": {"tasks:read tasks:write"}}
}

func with(v url.Values, k, val string) url.Values {
	out := url.Values{}
	for key, vs := range v {
		out[key] = vs
	}
	out.Set(k, val)
	return out
}

// TestIDJAGBetweenGatehouses: one Gatehouse issues an ID-JAG for its
// member by token exchange; another, whose workspace's connection is the
// first, accepts it with the JWT-bearer grant, and the token calls the
// tasks API. An audience, resource, scope or client the issuing
// workspace does not allow is refused, and so is a subject token that is
// not a live ID token of the issuer for the caller.
func TestIDJAGBetweenGatehouses(t *testing.T) {
	host := newMetadataHost(t)
	roots := x509.NewCertPool()
	roots.AddCert(host.srv.Certificate())
	o := testenv.Options{RootCAs: roots, AllowPrivate: true}
	testenv.RunWith(t, o, func(t *testing.T, idp *testenv.Env) {
		client := host.srv.URL + "/cached.json"
		w := newIDJAGWorld(t, idp, o, client)
		idt := w.idToken(t, client)

		r := tokenPost(t, idp, w.exchangeForm(client, idt)).Want(t, 200)
		if r.Str("issued_token_type") != oauth.TokenTypeIDJAG || r.Str("token_type") != "N_A" || r.Str("scope") != "tasks:read" {
			t.Fatalf("exchange answered %s; want an ID-JAG with token_type N_A and scope tasks:read", r.Body)
		}
		if n, _ := r.Get("expires_in").(float64); n <= 0 || n > 300 {
			t.Errorf("expires_in = %v; want at most 300", r.Get("expires_in"))
		}
		jag := r.Str("access_token")
		if h := testenv.Header(t, jag); h["typ"] != "oauth-id-jag+jwt" || (h["alg"] != "RS256" && h["alg"] != "ES256") || h["kid"] == nil {
			t.Errorf("ID-JAG header %v; want typ oauth-id-jag+jwt, RS256 or ES256, a kid", h)
		}
		c := testenv.Claims(t, jag)
		if c["iss"] != idp.URL || c["aud"] != w.as.URL || c["client_id"] != client || c["sub"] != w.person.UserID ||
			c["resource"] != w.resource || c["email"] != w.person.Email || c["jti"] == nil {
			t.Errorf("ID-JAG claims %v", c)
		}
		if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat > 300 {
			t.Errorf("ID-JAG lives %v s; want at most 300", exp-iat)
		}
		second := testenv.Claims(t, tokenPost(t, idp, w.exchangeForm(client, idt)).Want(t, 200).Str("access_token"))
		if second["jti"] == c["jti"] {
			t.Errorf("two ID-JAGs share the jti %v", c["jti"])
		}

		at := tokenPost(t, w.as, url.Values{"grant_type": {oauth.GrantJWTBearer}, "assertion": {jag}, "client_id": {client}}).Want(t, 200).Str("access_token")
		w.as.Call(t, "GET", "/tasks/v1/issues", at, nil).Want(t, 200)
		// The ID-JAG is no ID token of the issuer: it cannot be exchanged again.
		wantOAuthError(t, tokenPost(t, idp, w.exchangeForm(client, jag)), 400, "invalid_grant")

		form := w.exchangeForm(client, idt)
		wantOAuthError(t, tokenPost(t, idp, with(form, "audience", "https://elsewhere.example")), 400, "invalid_target")
		wantOAuthError(t, tokenPost(t, idp, with(form, "resource", w.as.URL+"/forms")), 400, "invalid_target")
		wantOAuthError(t, tokenPost(t, idp, with(form, "scope", "forms:read")), 400, "invalid_scope")
		wantOAuthError(t, tokenPost(t, idp, with(form, "requested_token_type", "urn:ietf:params:oauth:token-type:access_token")), 400, "invalid_request")

		// A client the workspace does not list, with its own ID token.
		other := registerClient(t, idp, map[string]any{"redirect_uris": []string{redirect}})
		wantOAuthError(t, tokenPost(t, idp, w.exchangeForm(other, w.idToken(t, other))), 400, "unauthorized_client")
		// Another client presenting the first one's ID token.
		wantOAuthError(t, tokenPost(t, idp, w.exchangeForm(other, idt)), 400, "invalid_grant")
		if n := len(idp.StoredAudit(t, w.idpOrg, "identity.sso.idjag_issued")); n != 2 {
			t.Errorf("%d issued audit entries; want 2", n)
		}

		if logs := idp.Logs.String(); !strings.Contains(logs, "method=oauth_idjag_issue") || strings.Contains(logs, jag) || strings.Contains(logs, idt) {
			t.Error("the issuer's log has no oauth_idjag_issue event, or holds the ID-JAG or the ID token")
		}
		// A subject who left the workspace.
		idp.Exec(t, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, w.idpOrg, w.person.UserID)
		wantOAuthError(t, tokenPost(t, idp, form), 400, "invalid_grant")
		idp.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'member', 0)`, w.idpOrg, w.person.UserID)
		tokenPost(t, idp, form).Want(t, 200)
		// The session behind the ID token ends with its grant.
		grants := idp.Call(t, "GET", "/v1/me/grants", w.person.Token, nil).Want(t, 200).List(t, "grants")
		for _, g := range grants {
			idp.Call(t, "DELETE", "/v1/me/grants/"+g["id"].(string), w.person.Token, nil).Want(t, 200)
		}
		wantOAuthError(t, tokenPost(t, idp, form), 400, "invalid_grant")
		// An expired ID token.
		idt = w.idToken(t, client)
		idp.Clock.Advance(oauth.IDTokenTTL)
		wantOAuthError(t, tokenPost(t, idp, w.exchangeForm(client, idt)), 400, "invalid_grant")
	})
}
