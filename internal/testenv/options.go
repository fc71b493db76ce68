package testenv

import (
	"cmp"
	"crypto/x509"
	"log/slog"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/dns"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/metrics"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/tracing"
)

// Options adjust an Env.
type Options struct {
	RateLimit bool
	// MailLimits turns on the limits that protect other people's
	// mailboxes (GATEHOUSE_MAIL_LIMIT), off by default so tests may mail
	// freely.
	MailLimits bool
	// Hasher overrides the cheap test hasher (e.g. to test rehashing).
	Hasher *password.Hasher
	// DeviceInterval is the OAuth device polling interval; 0: 1 s.
	DeviceInterval time.Duration
	// MetadataClient and AllowPrivate configure the fetching of OAuth client
	// ID metadata documents (a TLS test server's client, loopback allowed).
	MetadataClient *http.Client
	AllowPrivate   bool
	RootCAs        *x509.CertPool
	// JobQueue is the job queue the service inserts into and works;
	// several services given one queue on one PostgreSQL database are
	// instances of one deployment. "": a queue of its own.
	JobQueue string
	// LinkEventsWindow is how often link clicks are announced; 0: an hour,
	// so that tests announce them (env.Links.Flush).
	LinkEventsWindow time.Duration
	// SignSweepEvery is how often the Sign reminder and purge schedules
	// run; 0: their production periods (1 and 10 minutes).
	SignSweepEvery time.Duration
	// Brand is the hosted pages' branding; zero: Gatehouse's own.
	Brand pages.Brand
	// DB, when set, is the database to run on instead of a fresh one, so
	// two Envs are two instances of one deployment.
	DB *sqlstore.DB
	// LocalWeb sets the web URL (GATEHOUSE_WEB_URL, the passkeys' relying
	// party) to the server itself as http://localhost:port, an origin a
	// browser accepts for WebAuthn; else it is http://web.test.
	LocalWeb bool
	// WebURL, when set, is the web URL (e.g. a proxy in front of several
	// instances); it wins over LocalWeb.
	WebURL string
	// TLS serves over https (a test certificate Client trusts), so the
	// base URL is https: HSTS, Secure cookies with the __Host- prefix.
	TLS bool
	// Social are the upstream OpenID providers of social sign-in.
	Social []sso.SocialProvider
	// NoHSTS is GATEHOUSE_HSTS=off.
	NoHSTS bool
	// ShortLinksOnAccounts sets GATEHOUSE_SHORT_LINK_URL to its default,
	// {api_url}/l, on the accounts origin, where a short link shows a page
	// before it leaves; else it is http://links.test/l, another origin,
	// where it redirects at once (env.Follow asks for that host).
	ShortLinksOnAccounts bool
	// SessionMaxAge is a session's absolute lifetime
	// (GATEHOUSE_SESSION_MAX_AGE); 0: the default, 90 days.
	SessionMaxAge time.Duration
	// Metrics counts what the service does (GATEHOUSE_METRICS_ADDR); nil:
	// nothing. One per Env: its pools register on it.
	Metrics *metrics.Metrics
	// KeysReload is how often the key ring is read again; 0: 50 ms. Long,
	// an instance sees another's rotation only when a token makes it look.
	KeysReload time.Duration
	// Tracer makes requests, statements and jobs spans, and log lines
	// carry their trace ids (GATEHOUSE_OTEL_ENDPOINT); nil: no traces.
	Tracer *tracing.Tracer
}

// deps are the test doubles: the clock, a cheap hasher, the DNS server,
// fast device polling, webhook retries and click batches, and a job queue
// of the service's own (the PostgreSQL database is shared by the tests).
func (o Options) deps(env *Env, db *sqlstore.DB, sender mail.Sender, log *slog.Logger) app.Deps {
	hasher := o.Hasher
	if hasher == nil {
		hasher = password.NewHasher(cheapHash, 0)
	}
	interval := o.DeviceInterval
	if interval == 0 {
		interval = time.Second
	}
	return app.Deps{DB: db, Mail: sender, Resolver: dns.New(env.DNS.Addr, 2*time.Second), Logger: log, Now: env.Clock.Now,
		Hasher: hasher, DeviceInterval: interval, MetadataClient: o.MetadataClient,
		WebhookRetryDelays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
		// A click batch closes when a test flushes it (env.Links.Flush), not
		// by wall time: under load a short window split one batch in two.
		LinkEventsWindow: cmp.Or(o.LinkEventsWindow, time.Hour), SignSweepEvery: o.SignSweepEvery,
		JobQueue: env.Queue, JobPollInterval: 20 * time.Millisecond,
		MailRetryDelays: []time.Duration{50 * time.Millisecond},
		// Growing, so a test has a few seconds before the tries run out.
		LogoutRetryDelays: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
			800 * time.Millisecond},
		// Other instances' revocations show within 50 ms (production: 1 s).
		RevocationPoll: 50 * time.Millisecond, KeysReload: cmp.Or(o.KeysReload, 50*time.Millisecond), Metrics: o.Metrics, Tracer: o.Tracer}
}
