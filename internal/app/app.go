// Package app builds the whole Gatehouse service once: identity and
// workspace, the OAuth server, the tools, webhooks and the HTTP server.
// cmd/gatehouse and the end-to-end tests (internal/testenv) both call New,
// so what runs in production is what the tests run.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/dns"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/mcp"
	"github.com/gatehouse/gatehouse/internal/metrics"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/scim"
	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/tracing"
	"github.com/gatehouse/gatehouse/internal/web"
	"github.com/gatehouse/gatehouse/internal/webhooks"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Config is the service's settings (CONTRACT §1), URLs already resolved
// to their defaults.
type Config struct {
	BaseURL      string // the issuer
	APIURL       string // base of the tool APIs
	FormsURL     string
	ShortLinkURL string
	// MCPURL is GATEHOUSE_MCP_URL, the MCP server; "": {api_url}/mcp.
	MCPURL    string
	WebURL    string // base of links in emails
	MobileURL string // base of magic links for client=mobile
	// JWTSecret signs access tokens; empty: a secret generated once and
	// kept in the database.
	JWTSecret string
	// EncryptionKey is the master key of internal/seal (TOTP secrets,
	// queued mail); empty: a key generated once and kept in the database.
	EncryptionKey string
	RateLimit     bool
	// LocalLimits keeps the abuse limits in memory, per instance, on
	// PostgreSQL too (GATEHOUSE_RATE_LIMIT=local: one instance).
	LocalLimits bool
	// NoHSTS leaves Strict-Transport-Security out of the answers of an
	// https base URL (GATEHOUSE_HSTS=off: a proxy in front adds it).
	NoHSTS bool
	// MailLimit keeps the limits that protect other people's mailboxes.
	MailLimit bool
	// WebhookAllowPrivate lets webhooks reach private addresses;
	// MetadataAllowPrivate lets OAuth client ID metadata documents be
	// fetched from them (cmd sets both from GATEHOUSE_WEBHOOK_ALLOW_PRIVATE).
	WebhookAllowPrivate, MetadataAllowPrivate bool
	// OutboundCAs are trusted by outbound HTTPS; nil: the system roots.
	OutboundCAs *x509.CertPool
	// SignRetention is how long an ended Sign document is kept before
	// its purge; 0: sign.DefaultRetention.
	SignRetention time.Duration
	// Brand is the hosted pages' branding (GATEHOUSE_BRAND_*).
	Brand pages.Brand
	// SessionMaxAge is the absolute lifetime of a session; ReauthWindow
	// how recent a sign-in sensitive changes need (0: identity's defaults).
	SessionMaxAge, ReauthWindow time.Duration
	// JobRescueAfter is when a job still "running" is taken for lost (its
	// instance died) and run again; 0: jobs.RescueStuckJobsAfter.
	JobRescueAfter time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (GATEHOUSE_TRUSTED_PROXIES); empty: none.
	TrustedProxies []netip.Prefix
	// Social are the upstream OpenID providers of social sign-in
	// (GATEHOUSE_SOCIAL_*); empty: none.
	Social []sso.SocialProvider
}

// Deps are what production and the tests provide differently.
type Deps struct {
	DB       *sqlstore.DB          // opened and closed by the caller; the one required
	Mail     mail.Sender           // nil: mail is written to Logger
	Resolver workspace.TXTResolver // nil: the system resolver
	Logger   *slog.Logger          // nil: slog.Default()
	Now      func() time.Time      // nil: time.Now
	Hasher   *password.Hasher      // nil: the production parameters
	// DeviceInterval is the OAuth device polling interval; 0: oauth's.
	DeviceInterval time.Duration
	// MetadataClient fetches client ID metadata documents; nil: oauth's.
	MetadataClient *http.Client
	// WebhookRetryDelays overrides the webhook retry waits; nil: each
	// tool's own.
	WebhookRetryDelays []time.Duration
	// LinkEventsWindow is how often the clicks counted on each link are
	// announced in one link.clicked event; 0: 2 s.
	LinkEventsWindow time.Duration
	// SignSweepEvery is how often the Sign reminder and purge sweeps run;
	// 0: every minute and every 10 minutes.
	SignSweepEvery time.Duration
	// JobQueue is the job queue this service inserts into and works; "":
	// the database's. Tests sharing one PostgreSQL database give each
	// service its own.
	JobQueue string
	// JobPollInterval is how often due retries are looked for; 0: the
	// engine's.
	JobPollInterval time.Duration
	// MailRetryDelays overrides the waits between tries of a mail (the
	// last repeats); nil: mail.RetryDelays.
	MailRetryDelays []time.Duration
	// LogoutRetryDelays overrides the waits between tries of a
	// back-channel logout (the last repeats); nil: oauth.LogoutRetryDelays.
	LogoutRetryDelays []time.Duration
	// RevocationPoll is how often the revocation list reads what other
	// instances revoked; 0: revocation.Every (1 s).
	RevocationPoll time.Duration
	// KeysReload is how often the key ring is read again (a key rotated
	// on another instance); 0: keys.Reload (a minute).
	KeysReload time.Duration
	// Metrics is told of requests, sign-ins, refusals, jobs, pools and
	// the password-hash queue (GATEHOUSE_METRICS_ADDR); nil: nothing is
	// counted.
	Metrics *metrics.Metrics
	// Tracer makes requests, database statements and jobs spans
	// (GATEHOUSE_OTEL_ENDPOINT); nil: no traces.
	Tracer *tracing.Tracer
}

// App is the running service.
type App struct {
	Handler   http.Handler
	Identity  *identity.Service
	Workspace *workspace.Service
	OAuth     *oauth.Server
	SCIM      *scim.Service // SCIM tokens and the /scim/v2 provisioning protocol
	SSO       *sso.Service  // enterprise SSO per workspace
	Forms     *forms.Service
	Links     *links.Service
	Tasks     *tasks.Service
	Sign      *sign.Service
	MCP       *mcp.Server // the MCP server for AI clients (GATEHOUSE_MCP_URL)
	Webhooks  *webhooks.Service
	// Keys is the key ring (ID tokens, the JWK Set).
	Keys *keys.Ring
	// Signer is the one signing seam: the access tokens' HS256 secret
	// joined to the ring (keys.Join); identity, workspace and the JWK Set
	// take it.
	Signer keys.Signer
	jobs   *jobs.Engine
	jobsDB *sqlstore.DB
	hasher *password.Hasher
	log    *slog.Logger
	brand  pages.Brand
	shown  *seal.Box // pages' show-once cookie
	// stopPoll ends the revocation list's and the key ring's polling,
	// and polls waits for them to return (Close): a poll's query still
	// running would outlive the database's Close.
	stopPoll context.CancelFunc
	polls    sync.WaitGroup
}

// New builds the service on deps.DB, each module on its own store.
func New(ctx context.Context, cfg Config, deps Deps) (*App, error) {
	deps, err := deps.withDefaults()
	if err != nil {
		return nil, err
	}
	secret, err := newSecret(ctx, cfg, deps)
	if err != nil {
		return nil, err
	}
	master, err := setting(ctx, deps.DB, "encryption_key", cfg.EncryptionKey)
	if err != nil {
		return nil, err
	}
	mails, err := mail.NewSealer(master)
	if err != nil {
		return nil, err
	}
	brand := mailBrand(cfg)
	mails = mails.Branded(brand)
	totpBox, err := seal.New(master, "totp") // TOTP secrets
	if err != nil {
		return nil, err
	}
	shown, err := seal.New(master, "show-once") // secrets crossing a page's redirect
	if err != nil {
		return nil, err
	}
	hooks, err := seal.New(master, "webhook") // webhook bodies in the job queue
	if err != nil {
		return nil, err
	}
	ssoBox, err := seal.New(master, "sso") // SSO connections' client secrets
	if err != nil {
		return nil, err
	}
	hasher := deps.Hasher
	db, log, now := deps.DB.WithMail(mails).WithWebhookSeal(hooks), deps.Logger, deps.Now
	if deps.JobQueue != "" {
		db = db.OnQueue(deps.JobQueue)
	}
	var webTracer web.Tracer
	var jobTracer jobs.Tracer
	if deps.Tracer != nil {
		db, webTracer, jobTracer = db.WithTracer(deps.Tracer), deps.Tracer, deps.Tracer
	}
	a := &App{log: log, brand: cfg.Brand, shown: shown, hasher: hasher}
	obs := observe(deps.Metrics, deps.DB, hasher)
	events := web.SecurityLog{Log: log, Observer: obs.web}
	revoked, db, err := a.revocations(ctx, db, now, deps.RevocationPoll)
	if err != nil {
		return nil, err
	}
	a.jobsDB = db
	limits, err := sharedLimits(cfg, db, master, log)
	if err != nil {
		return nil, err
	}
	if a.Keys, err = openKeys(ctx, db, master, secret, now, log, deps.KeysReload); err != nil {
		return nil, err
	}
	signer := keys.Join(a.Keys.Access(), a.Keys)
	a.Signer = signer
	a.Workspace = workspace.New(workspace.Config{Store: db.Workspace(), Signer: signer, Issuer: cfg.BaseURL, Resolver: deps.Resolver, Logger: log,
		Now: now, WebURL: cfg.WebURL, NoMailLimits: !cfg.MailLimit, Brand: brand,
		// Set below: identity, which keeps sessions, is built on workspace.
		RecentAuth: func(ctx context.Context, p *gatehouse.Principal, action string) error {
			return a.Identity.RequireRecentAuth(ctx, p, action)
		},
		PolicyRaised: revoked.PolicyRaised,
		SessionEnd:   func(created time.Time) time.Time { return a.Identity.AbsoluteEnd(created) }})
	a.Identity = identity.New(identity.Config{Store: db.Identity(), Workspace: a.Workspace, Signer: signer, Issuer: cfg.BaseURL, Hasher: hasher,
		TOTP: totpBox, Logger: log, Now: now, WebURL: cfg.WebURL, MobileURL: cfg.MobileURL, NoLockout: !cfg.RateLimit, Limits: limits, Brand: brand,
		Revocations: revoked, SessionMaxAge: cfg.SessionMaxAge, ReauthWindow: cfg.ReauthWindow, Events: events,
		SSOGate: ssoGate{a}})
	a.SCIM = scim.New(scim.Config{Store: db.SCIM(), Workspace: a.Workspace, BaseURL: cfg.BaseURL, Logger: log, Now: now,
		RecentAuth: a.Identity.RequireRecentAuth})
	a.SSO = sso.New(sso.Config{Store: db.SSO(), Workspace: a.Workspace, Identity: a.Identity, Secrets: ssoBox, BaseURL: cfg.BaseURL, Logger: log, Now: now,
		AllowPrivate: cfg.MetadataAllowPrivate, RootCAs: cfg.OutboundCAs, Events: events, Social: cfg.Social})
	mcpURL, err := mcpURLOf(cfg)
	if err != nil {
		return nil, err
	}
	a.OAuth = oauth.New(oauth.Config{Service: a.Identity, Store: db.OAuth(), Logger: log, Issuer: cfg.BaseURL, APIURL: cfg.APIURL, MCPURL: mcpURL, Now: now,
		DeviceInterval: deps.DeviceInterval, MetadataClient: deps.MetadataClient, AllowPrivate: cfg.MetadataAllowPrivate,
		RootCAs: cfg.OutboundCAs, RateLimit: cfg.RateLimit, Events: events,
		Keys: a.Keys, LogoutSigner: a.Keys, LogoutAllowPrivate: cfg.MetadataAllowPrivate, Assertions: a.SSO})
	a.Webhooks = webhooks.New(webhooks.Config{Store: db.Webhooks(), Logger: log, Now: now, AllowPrivate: cfg.WebhookAllowPrivate,
		RootCAs: cfg.OutboundCAs, RetryDelays: deps.WebhookRetryDelays})
	a.Links = links.New(db.Links(), cfg.ShortLinkURL, now)
	a.Links.SetEvents(a.Webhooks.For(webhooks.Links))
	a.Links.SetAccountsURLs(cfg.BaseURL, cfg.APIURL, cfg.WebURL, cfg.FormsURL)
	a.Forms = forms.New(forms.Config{Store: db.Forms(), Logger: log, Now: now, FormsURL: cfg.FormsURL,
		NoMailLimits: !cfg.MailLimit, Brand: brand})
	a.Tasks = tasks.New(db.Tasks(), now)
	a.Sign = sign.New(db.Sign(), cfg.APIURL, now, a.Webhooks.For(webhooks.Sign))
	a.Sign.SetRetention(cfg.SignRetention)
	a.Sign.SetMailLimits(cfg.MailLimit)
	a.MCP = mcp.New(mcp.Config{URL: mcpURL, Origins: origins(mcpURL, cfg.BaseURL, cfg.APIURL), MetadataPath: oauth.MCPMetadataPath, Logger: log,
		Tasks: a.Tasks, Links: a.Links, Forms: a.Forms, Sign: a.Sign, Teams: a.Workspace.Teams,
		EnabledTools: func(ctx context.Context, orgID string) ([]string, error) {
			return a.Workspace.EnabledTools(ctx, db.Workspace(), &workspace.Org{ID: orgID})
		}})
	k := web.NewServer(web.Config{Auth: a.Identity, Health: a.Identity.Health, Logger: log, RateLimit: cfg.RateLimit, Now: now,
		ResourceMetadataURL: a.OAuth.ResourceMetadataURL, Issuer: a.OAuth.Issuer(), APIURL: a.OAuth.APIURL(), HSTS: strings.HasPrefix(cfg.BaseURL, "https://") && !cfg.NoHSTS,
		Observer: obs.web, Ready: a.ready, TrustedProxies: cfg.TrustedProxies, Limits: limits,
		Tracer: webTracer})
	// The links mailed to one address are bounded in the service, whichever
	// edge asks, with the kernel's named (and shared) limiters.
	a.Identity.LimitAddresses(k)
	a.routes(k)
	a.Handler = k
	if a.jobs, err = jobs.New(ctx, jobs.Config{DB: db, Logger: log, Webhooks: a.Webhooks, WebhookSeal: hooks, PollInterval: deps.JobPollInterval, RescueAfter: cfg.JobRescueAfter,
		Mail: deps.Mail, MailSealer: mails, MailRetryDelays: deps.MailRetryDelays, Schedules: a.schedules(db, now, deps),
		Logouts: a.OAuth, LogoutRetryDelays: deps.LogoutRetryDelays, Observer: obs.jobs, Tracer: jobTracer}); err != nil {
		return nil, err
	}
	if err := a.jobs.Start(ctx); err != nil {
		return nil, err
	}
	var pollCtx context.Context
	pollCtx, a.stopPoll = context.WithCancel(context.Background())
	a.polls.Go(func() { revoked.Run(pollCtx) })
	a.polls.Go(func() { a.Keys.Run(pollCtx) })
	return a, nil
}

// sharedLimits keeps the abuse limits in the database on PostgreSQL, where
// several instances share it, so the deployment as a whole allows what
// one instance would; nil (in memory) on SQLite, whose file one process
// owns, with GATEHOUSE_RATE_LIMIT=local, and with the limits off. The deployment is the job queue's.
func sharedLimits(cfg Config, db *sqlstore.DB, master []byte, log *slog.Logger) (*ratelimit.Shared, error) {
	if !cfg.RateLimit || cfg.LocalLimits || db.Dialect() != "postgres" {
		return nil, nil
	}
	return ratelimit.NewShared(db.Limits(), master, db.Queue(), log)
}

// ssoGate asks the SSO service, built after identity, whether a password
// or magic-link sign-in is allowed (enforce SSO).
type ssoGate struct{ a *App }

func (g ssoGate) AllowSignIn(ctx context.Context, method, userID, emailKey string) error {
	return g.a.SSO.AllowSignIn(ctx, method, userID, emailKey)
}

// mcpURLOf is the MCP server's URL: GATEHOUSE_MCP_URL, by default
// {api_url}/mcp. It may be neither the tool APIs' base nor under a tool's
// API, whose tokens would then reach it, and the other way round.
func mcpURLOf(cfg Config) (string, error) {
	base := cfg.APIURL
	if base == "" {
		base = cfg.BaseURL
	}
	u := strings.TrimRight(cfg.MCPURL, "/")
	if u == "" {
		u = strings.TrimRight(base, "/") + "/mcp"
	}
	if t := gatehouse.ResourceTool(u, base); t == gatehouse.AllTools || workspace.IsTool(t) || strings.TrimRight(cfg.BaseURL, "/") == u {
		return "", fmt.Errorf("GATEHOUSE_MCP_URL %s must not be the base URL, the API URL or under a tool's API", u)
	}
	return u, nil
}

// origins are the origins of urls, each once: where a browser page may
// call the MCP server from.
func origins(urls ...string) []string {
	var out []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			continue
		}
		if o := u.Scheme + "://" + u.Host; !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// withDefaults fills what the binary may leave unset, once, so no module
// is handed a nil clock, logger, mail sender, resolver or hasher.
func (d Deps) withDefaults() (Deps, error) {
	if d.DB == nil {
		return d, errors.New("app: no database")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Hasher == nil {
		d.Hasher = password.NewHasher(password.OWASP, 0)
	}
	if d.Resolver == nil {
		d.Resolver = dns.New("", 0)
	}
	if d.Mail == nil {
		m, err := mail.New(mail.Options{Logger: d.Logger})
		if err != nil {
			return d, fmt.Errorf("mail: %w", err)
		}
		d.Mail = m
	}
	return d, nil
}

// mailBrand is the hosted pages' product name and support link for mail:
// a support link that is a path of this server is made absolute on WebURL
// (a mail reader has no page to resolve it against).
func mailBrand(cfg Config) mail.Brand {
	b := mail.Brand{Name: cfg.Brand.Name, SupportURL: cfg.Brand.SupportURL}
	if strings.HasPrefix(b.SupportURL, "/") {
		b.SupportURL = strings.TrimRight(cfg.WebURL, "/") + b.SupportURL
	}
	return b
}

// revocations loads the revocation list every bearer token is checked
// against and returns it with the view of db whose revoking writes add
// what they recorded to it at once after their commit, without a read
// (other instances see them at their next poll).
func (a *App) revocations(ctx context.Context, db *sqlstore.DB, now func() time.Time, poll time.Duration) (*revocation.List, *sqlstore.DB, error) {
	revoked := revocation.New(db.Revocations(), now, poll, a.log)
	if err := revoked.Sync(ctx); err != nil {
		return nil, nil, fmt.Errorf("load revocations: %w", err)
	}
	return revoked, db.OnRevoke(func(_ context.Context, es []revocation.Entry) { revoked.Add(es...) }), nil
}

// JobsDB is the database as the service's stores see it: its job queue,
// able to queue mail.
func (a *App) JobsDB() *sqlstore.DB { return a.jobsDB }

// newSecret returns the HS256 key of the access tokens: cfg.JWTSecret, or
// the secret kept in the database (created on first start).
func newSecret(ctx context.Context, cfg Config, deps Deps) (*keys.Secret, error) {
	secret, err := setting(ctx, deps.DB, "jwt_secret", cfg.JWTSecret)
	if err != nil {
		return nil, err
	}
	return keys.NewSecret(secret)
}

// OpenKeys loads the key ring of the database under cfg.EncryptionKey (or
// the key kept in the database), with cfg.JWTSecret (or the secret kept in
// the database) as the configured HS256 key, for `gatehouse keys`.
func OpenKeys(ctx context.Context, cfg Config, db *sqlstore.DB, log *slog.Logger) (*keys.Ring, error) {
	master, err := setting(ctx, db, "encryption_key", cfg.EncryptionKey)
	if err != nil {
		return nil, err
	}
	secret, err := newSecret(ctx, cfg, Deps{DB: db})
	if err != nil {
		return nil, err
	}
	return openKeys(ctx, db, master, secret, time.Now, log, 0)
}

func openKeys(ctx context.Context, db *sqlstore.DB, master []byte, secret *keys.Secret, now func() time.Time, log *slog.Logger,
	every time.Duration) (*keys.Ring, error) {
	return keys.Open(ctx, keys.Config{Store: db.Keys(), Master: master, Secret: secret, Now: now, Logger: log, Every: every})
}

// setting returns configured, or when it is empty the random key kept in the
// database under name (created on first start, shared by every instance).
func setting(ctx context.Context, db *sqlstore.DB, name, configured string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	var b [48]byte
	rand.Read(b[:])
	v, err := db.Identity().SettingOrCreate(ctx, name, base64.RawURLEncoding.EncodeToString(b[:]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []byte(v), nil
}

// Close stops the job engine: the jobs under way (mail among them) finish,
// jobs not started stay queued for the next start or another instance.
// Link clicks need no flush: each is counted in the database by its
// redirect, and the next link_clicks run on any instance announces it.
// Call it once the HTTP server has
// stopped; at ctx's end the running jobs are cancelled and ctx's error
// returned. The database stays open: the caller owns it.
func (a *App) Close(ctx context.Context) error {
	a.stopPoll()
	a.polls.Wait()
	a.Identity.Wait() // the audit entries written after their answers
	return a.jobs.Stop(ctx)
}

// schedules is the periodic work, run once per period across instances:
// the Links click announcements every window (0: 2 s), Sign's expiry
// sweep and reminder rounds every minute and its purge sweep every ten
// (the tests' SignSweepEvery sets both reminder and purge), and every ten
// minutes the pruning of revocations older than any token
// they could refuse; once a day, that of expired rotated refresh tokens
// (a scan of their table, which has no index on expiry to keep refreshes
// cheap). Every hour, the rotation of a signing key of the key ring
// older than keys.RotateEvery (90 days), and the refresh of the SAML
// connections' metadata read longer than sso.SAMLRefreshEvery ago.
func (a *App) schedules(db *sqlstore.DB, now func() time.Time, deps Deps) []jobs.Schedule {
	window := cmp.Or(deps.LinkEventsWindow, 2*time.Second)
	remind := cmp.Or(deps.SignSweepEvery, time.Minute)
	purge := cmp.Or(deps.SignSweepEvery, 10*time.Minute)
	return []jobs.Schedule{{Name: "link_clicks", Every: window, Run: func(ctx context.Context) error {
		_, err := a.Links.Announce(ctx)
		return err
	}}, {Name: "sign_expire", Every: time.Minute, Run: func(ctx context.Context) error {
		_, err := a.Sign.ExpireDue(ctx)
		return err
	}}, {Name: "sign_remind", Every: remind, Run: func(ctx context.Context) error {
		_, err := a.Sign.RemindDue(ctx)
		return err
	}}, {Name: "sign_purge", Every: purge, Run: func(ctx context.Context) error {
		_, err := a.Sign.PurgeDue(ctx)
		return err
	}}, {Name: "revocations_prune", Every: 10 * time.Minute, Run: func(ctx context.Context) error {
		_, err := db.Revocations().Prune(ctx, now().Add(-revocation.Keep))
		return err
	}}, {Name: "rate_limits_prune", Every: time.Minute, Run: func(ctx context.Context) error {
		_, err := db.Limits().Prune(ctx, now())
		return err
	}}, {Name: "refresh_history_prune", Every: 24 * time.Hour, Run: func(ctx context.Context) error {
		_, err := db.Identity().PruneRefreshHistory(ctx, now())
		return err
	}}, {Name: "keys_rotate", Every: time.Hour, Run: func(ctx context.Context) error {
		rotated, err := a.Keys.RotateDue(ctx)
		if len(rotated) > 0 {
			a.log.Info("signing keys rotated", "algs", rotated)
		}
		return err
	}}, {Name: "saml_metadata_refresh", Every: time.Hour, Run: func(ctx context.Context) error {
		_, err := a.SSO.RefreshSAMLMetadata(ctx)
		return err
	}}}
}
