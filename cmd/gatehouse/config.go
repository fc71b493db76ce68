package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	netmail "net/mail"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/seal"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/sso"
)

// Config is every setting of CONTRACT §1, read from GATEHOUSE_* variables or
// the kebab-case flag of the same name.
type Config struct {
	Brand pages.Brand // GATEHOUSE_BRAND_*
	Addr  string
	// MetricsAddr is the private listener of /metrics and
	// /debug/pprof/; "": off.
	MetricsAddr string
	// OTelEndpoint is GATEHOUSE_OTEL_ENDPOINT, the OTLP/HTTP base URL of
	// traces; otel says what the standard OTEL_* variables ask (tracing.go).
	OTelEndpoint        string
	otel                otelEnv
	DatabaseURL         string
	BaseURL             string
	APIURL              string
	FormsURL            string
	ShortLinkURL        string
	MCPURL              string
	WebURL              string
	MobileURL           string
	JWTSecret           string
	EncryptionKey       string
	SMTPURL             string
	MailFrom            string
	DNSServer           string
	WebhookAllowPrivate bool
	WebhookCAFile       string
	// OutboundCAs are the system roots plus WebhookCAFile's, trusted by
	// outbound HTTPS (client ID metadata documents); nil: system roots.
	OutboundCAs *x509.CertPool
	LogFormat   string
	RateLimit   bool
	// LocalLimits keeps the abuse limits in each instance's memory
	// (GATEHOUSE_RATE_LIMIT=local) instead of the shared PostgreSQL table.
	LocalLimits bool
	// MailLimit keeps the limits on mail to strangers on (invitations,
	// Sign, Forms); independent of RateLimit, since they protect other
	// people's mailboxes.
	MailLimit bool
	// HSTS sends Strict-Transport-Security when the base URL is https;
	// off behind a proxy that adds it.
	HSTS bool
	// ShutdownDrain is how long the server keeps answering after SIGINT or
	// SIGTERM, with keep-alives off, before it closes idle connections.
	ShutdownDrain time.Duration
	// SignRetention is how long an ended Sign document is kept before
	// its file and signing data are purged.
	SignRetention time.Duration
	// SessionMaxAge is the absolute lifetime of a sign-in session;
	// ReauthWindow how recent a sign-in sensitive changes need.
	SessionMaxAge, ReauthWindow time.Duration
	// JobRescueAfter is when a job still "running" is taken for lost and
	// run again.
	JobRescueAfter    time.Duration
	rawJobRescueAfter string
	rawSessionMaxAge  string
	rawReauthWindow   string
	rawAllowPrivate   string
	rawRateLimit      string
	rawMailLimit      string
	rawHSTS           string
	rawShutdownDrain  string
	rawSignRetention  string
	// Mail is GATEHOUSE_MAIL: "log" asks for mail written to the log,
	// which an https base URL otherwise refuses without SMTP.
	Mail string
	// TrustedProxies are GATEHOUSE_TRUSTED_PROXIES' CIDRs.
	TrustedProxies    []netip.Prefix
	rawTrustedProxies string
	// Social are the social sign-in providers (GATEHOUSE_SOCIAL_*).
	Social []sso.SocialProvider
	// fileErrs are the *_FILE settings that could not be read, and the
	// social providers' problems.
	fileErrs []error
}

// secretSettings are the settings that may also be read from a file
// named by the same variable with _FILE (the container-secrets
// convention), so the secret stays out of the environment.
var secretSettings = []string{"GATEHOUSE_DATABASE_URL", "GATEHOUSE_JWT_SECRET", "GATEHOUSE_ENCRYPTION_KEY", "GATEHOUSE_SMTP_URL"}

// setting names one variable, its default and where it is stored.
type setting struct {
	env, def string
	dst      *string
}

func (c *Config) settings() []setting {
	return []setting{
		{"GATEHOUSE_ADDR", "127.0.0.1:8080", &c.Addr},
		{"GATEHOUSE_METRICS_ADDR", "", &c.MetricsAddr},
		{"GATEHOUSE_OTEL_ENDPOINT", "", &c.OTelEndpoint},
		{"GATEHOUSE_DATABASE_URL", "sqlite:gatehouse.db", &c.DatabaseURL},
		{"GATEHOUSE_BASE_URL", "", &c.BaseURL},
		{"GATEHOUSE_API_URL", "", &c.APIURL},
		{"GATEHOUSE_FORMS_URL", "", &c.FormsURL},
		{"GATEHOUSE_SHORT_LINK_URL", "", &c.ShortLinkURL},
		{"GATEHOUSE_MCP_URL", "", &c.MCPURL},
		{"GATEHOUSE_WEB_URL", "", &c.WebURL},
		{"GATEHOUSE_MOBILE_URL", "", &c.MobileURL},
		{"GATEHOUSE_JWT_SECRET", "", &c.JWTSecret},
		{"GATEHOUSE_ENCRYPTION_KEY", "", &c.EncryptionKey},
		{"GATEHOUSE_SMTP_URL", "", &c.SMTPURL},
		{"GATEHOUSE_MAIL_FROM", "Gatehouse <no-reply@localhost>", &c.MailFrom},
		{"GATEHOUSE_MAIL", "", &c.Mail},
		{"GATEHOUSE_TRUSTED_PROXIES", "", &c.rawTrustedProxies},
		{"GATEHOUSE_DNS_SERVER", "", &c.DNSServer},
		{"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", "false", &c.rawAllowPrivate},
		{"GATEHOUSE_WEBHOOK_CA_FILE", "", &c.WebhookCAFile},
		{"GATEHOUSE_LOG_FORMAT", "text", &c.LogFormat},
		{"GATEHOUSE_RATE_LIMIT", "on", &c.rawRateLimit},
		{"GATEHOUSE_MAIL_LIMIT", "on", &c.rawMailLimit},
		{"GATEHOUSE_HSTS", "on", &c.rawHSTS},
		{"GATEHOUSE_SHUTDOWN_DRAIN", "3s", &c.rawShutdownDrain},
		{"GATEHOUSE_SIGN_RETENTION", "365d", &c.rawSignRetention},
		{"GATEHOUSE_BRAND_NAME", "Gatehouse", &c.Brand.Name},
		{"GATEHOUSE_BRAND_LOGO_URL", "", &c.Brand.LogoURL},
		{"GATEHOUSE_BRAND_ACCENT", "", &c.Brand.Accent},
		{"GATEHOUSE_BRAND_SUPPORT_URL", "", &c.Brand.SupportURL},
		{"GATEHOUSE_BRAND_TERMS_URL", "", &c.Brand.TermsURL},
		{"GATEHOUSE_SESSION_MAX_AGE", "90d", &c.rawSessionMaxAge},
		{"GATEHOUSE_REAUTH_WINDOW", "15m", &c.rawReauthWindow},
		{"GATEHOUSE_JOB_RESCUE_AFTER", "2m", &c.rawJobRescueAfter},
	}
}

func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "GATEHOUSE_")), "_", "-")
}

// loadConfig reads the environment, then flags in args, and validates the
// result, reporting every problem at once.
func loadConfig(args []string, getenv func(string) string) (*Config, error) {
	return loadConfigFlags(args, getenv, flag.NewFlagSet("gatehouse", flag.ContinueOnError))
}

// loadConfigFlags is loadConfig with fs, which may hold a command's own
// flags besides the settings.
func loadConfigFlags(args []string, getenv func(string) string, fs *flag.FlagSet) (*Config, error) {
	c := &Config{}
	fs.SetOutput(discard{})
	for _, s := range c.settings() {
		*s.dst = s.def
		if v, ok := lookup(getenv, s.env); ok {
			*s.dst = v
		}
		if v, err := fromFile(getenv, s.env); err != nil {
			c.fileErrs = append(c.fileErrs, err)
		} else if v != "" {
			*s.dst = v
		}
		fs.StringVar(s.dst, flagName(s.env), *s.dst, s.env)
	}
	social, errs := loadSocial(getenv)
	c.Social, c.fileErrs = social, append(c.fileErrs, errs...)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.otel = readOTelEnv(getenv)
	if err := c.validate(); err != nil {
		return c, err
	}
	c.derive()
	return c, nil
}

func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// check is one validation rule: the variable it names and what is wrong
// with its value (nil: nothing).
type check struct {
	env string
	bad func(c *Config) error
}

// checks are every rule on the settings, in the order they are reported.
func checks() []check {
	cs := []check{
		{"GATEHOUSE_ADDR", func(c *Config) error { return checkHostPort(c.Addr) }},
		{"GATEHOUSE_OTEL_ENDPOINT", func(c *Config) error { return checkOTelEndpoint(c.OTelEndpoint) }},
		{"GATEHOUSE_METRICS_ADDR", func(c *Config) error {
			if c.MetricsAddr == "" {
				return nil
			}
			if err := checkHostPort(c.MetricsAddr); err != nil {
				return err
			}
			if _, port, _ := net.SplitHostPort(c.MetricsAddr); c.MetricsAddr == c.Addr && port != "0" {
				return errors.New("must differ from GATEHOUSE_ADDR: metrics and pprof stay on a private listener")
			}
			return nil
		}},
		{"GATEHOUSE_DATABASE_URL", func(c *Config) error { return sqlstore.ValidateURL(c.DatabaseURL) }},
	}
	for _, u := range []struct {
		env string
		val func(c *Config) string
	}{
		{"GATEHOUSE_BASE_URL", func(c *Config) string { return c.BaseURL }},
		{"GATEHOUSE_API_URL", func(c *Config) string { return c.APIURL }},
		{"GATEHOUSE_FORMS_URL", func(c *Config) string { return c.FormsURL }},
		{"GATEHOUSE_SHORT_LINK_URL", func(c *Config) string { return c.ShortLinkURL }},
		{"GATEHOUSE_MCP_URL", func(c *Config) string { return c.MCPURL }},
		{"GATEHOUSE_WEB_URL", func(c *Config) string { return c.WebURL }},
	} {
		cs = append(cs, check{u.env, func(c *Config) error { return optional(u.val(c), checkHTTPURL) }})
	}
	cs = append(cs,
		check{"GATEHOUSE_MOBILE_URL", func(c *Config) error { return optional(c.MobileURL, checkAbsoluteURL) }},
		check{"GATEHOUSE_JWT_SECRET", func(c *Config) error {
			if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
				return fmt.Errorf("must be at least 32 bytes, got %d", len(c.JWTSecret))
			}
			return nil
		}},
		check{"GATEHOUSE_ENCRYPTION_KEY", func(c *Config) error {
			if c.EncryptionKey != "" && len(c.EncryptionKey) < seal.MinMasterLen {
				return fmt.Errorf("must be at least %d bytes, got %d", seal.MinMasterLen, len(c.EncryptionKey))
			}
			return nil
		}},
		check{"GATEHOUSE_SMTP_URL", func(c *Config) error { return optional(c.SMTPURL, mail.ParseURL) }},
		check{"GATEHOUSE_MAIL", func(c *Config) error {
			switch {
			case c.Mail != "" && c.Mail != "log":
				return fmt.Errorf("want log or nothing, got %q", c.Mail)
			case c.SMTPURL == "" && c.Mail != "log" && strings.HasPrefix(c.BaseURL, "https://"):
				// Magic links and reset links would land in the log.
				return errors.New("the base URL is https and GATEHOUSE_SMTP_URL is unset: set it, or GATEHOUSE_MAIL=log to write mail (sign-in links included) to the log on purpose")
			}
			return nil
		}},
		check{"GATEHOUSE_MAIL_FROM", func(c *Config) error {
			if _, err := netmail.ParseAddress(c.MailFrom); err != nil {
				return fmt.Errorf("not an address: %q", c.MailFrom)
			}
			return nil
		}},
		check{"GATEHOUSE_DNS_SERVER", func(c *Config) error {
			if _, port, err := net.SplitHostPort(c.DNSServer); c.DNSServer != "" && (err != nil || port == "") {
				return fmt.Errorf("want HOST:PORT, got %q", c.DNSServer)
			}
			return nil
		}},
		check{"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", func(c *Config) error {
			if _, err := parseBool(c.rawAllowPrivate); err != nil {
				return fmt.Errorf("want true or false, got %q", c.rawAllowPrivate)
			}
			return nil
		}},
		check{"GATEHOUSE_WEBHOOK_CA_FILE", func(c *Config) error {
			_, err := loadCAs(c.WebhookCAFile)
			return err
		}},
		check{"GATEHOUSE_LOG_FORMAT", func(c *Config) error {
			if c.LogFormat != "text" && c.LogFormat != "json" {
				return fmt.Errorf("want text or json, got %q", c.LogFormat)
			}
			return nil
		}},
		check{"GATEHOUSE_RATE_LIMIT", func(c *Config) error {
			if c.rawRateLimit == "local" {
				return nil
			}
			return checkOnOff(c.rawRateLimit)
		}},
		check{"GATEHOUSE_MAIL_LIMIT", func(c *Config) error { return checkOnOff(c.rawMailLimit) }},
		check{"GATEHOUSE_HSTS", func(c *Config) error { return checkOnOff(c.rawHSTS) }},
		check{"GATEHOUSE_TRUSTED_PROXIES", func(c *Config) error {
			_, err := parsePrefixes(c.rawTrustedProxies)
			return err
		}},
	)
	cs = append(cs, durationChecks()...)
	return append(cs, brandChecks()...)
}

// durationChecks are the checks of the settings that are durations.
func durationChecks() []check {
	return []check{
		{"GATEHOUSE_SHUTDOWN_DRAIN", func(c *Config) error {
			if d, err := time.ParseDuration(c.rawShutdownDrain); err != nil || d < 0 {
				return fmt.Errorf("want a duration of 0 or more such as 3s, got %q", c.rawShutdownDrain)
			}
			return nil
		}},
		{"GATEHOUSE_SIGN_RETENTION", func(c *Config) error {
			if d, err := parseDays(c.rawSignRetention); err != nil || d < time.Hour {
				return fmt.Errorf("want a duration of at least 1h such as 365d or 720h, got %q", c.rawSignRetention)
			}
			return nil
		}},
		{"GATEHOUSE_SESSION_MAX_AGE", func(c *Config) error { return checkPositive(c.rawSessionMaxAge, "90d or 2160h") }},
		{"GATEHOUSE_REAUTH_WINDOW", func(c *Config) error { return checkPositive(c.rawReauthWindow, "15m") }},
		{"GATEHOUSE_JOB_RESCUE_AFTER", func(c *Config) error {
			if d, err := time.ParseDuration(c.rawJobRescueAfter); err != nil || d < jobs.MinRescueAfter {
				return fmt.Errorf("want a duration of at least %s (twice the longest job timeout) such as 2m, got %q", jobs.MinRescueAfter, c.rawJobRescueAfter)
			}
			return nil
		}},
	}
}

// brandChecks are the checks of the GATEHOUSE_BRAND_* settings.
func brandChecks() []check {
	return []check{
		{"GATEHOUSE_BRAND_NAME", func(c *Config) error {
			if n := len([]rune(c.Brand.Name)); n > 60 || strings.TrimSpace(c.Brand.Name) == "" {
				return fmt.Errorf("want 1 to 60 characters, got %d", n)
			}
			// The name goes into mail subjects: no line breaks or other
			// control characters.
			if strings.IndexFunc(c.Brand.Name, unicode.IsControl) >= 0 {
				return errors.New("want no control characters (line breaks, tabs)")
			}
			return nil
		}},
		{"GATEHOUSE_BRAND_LOGO_URL", func(c *Config) error { return pages.CheckBrandURL(c.Brand.LogoURL) }},
		{"GATEHOUSE_BRAND_ACCENT", func(c *Config) error { return pages.CheckAccent(c.Brand.Accent) }},
		{"GATEHOUSE_BRAND_SUPPORT_URL", func(c *Config) error { return pages.CheckBrandURL(c.Brand.SupportURL) }},
		{"GATEHOUSE_BRAND_TERMS_URL", func(c *Config) error { return pages.CheckBrandURL(c.Brand.TermsURL) }},
	}
}

// fromFile reads the setting env from the file its env_FILE names ("":
// not set, or env is not a secret setting), without its final line
// break; setting both env and env_FILE is an error.
func fromFile(getenv func(string) string, env string) (string, error) {
	if !slices.Contains(secretSettings, env) {
		return "", nil
	}
	path, ok := lookup(getenv, env+"_FILE")
	if !ok {
		return "", nil
	}
	if _, both := lookup(getenv, env); both {
		return "", fmt.Errorf("%s_FILE: set both it and %s; keep one", env, env)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: cannot read %q", env, path)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("%s_FILE: %q is empty", env, path)
	}
	return v, nil
}

// validate runs every check; the error names each bad setting.
func (c *Config) validate() error {
	errs := slices.Clone(c.fileErrs)
	for _, ch := range checks() {
		if err := ch.bad(c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", ch.env, err))
		}
	}
	return errors.Join(errs...)
}

// derive sets the typed settings from their raw values; validate has
// accepted them.
func (c *Config) derive() {
	c.WebhookAllowPrivate, _ = parseBool(c.rawAllowPrivate)
	c.OutboundCAs, _ = loadCAs(c.WebhookCAFile)
	c.RateLimit = c.rawRateLimit != "off"
	c.LocalLimits = c.rawRateLimit == "local"
	c.MailLimit = c.rawMailLimit == "on"
	c.HSTS = c.rawHSTS == "on"
	c.TrustedProxies, _ = parsePrefixes(c.rawTrustedProxies)
	c.ShutdownDrain, _ = time.ParseDuration(c.rawShutdownDrain)
	c.SignRetention, _ = parseDays(c.rawSignRetention)
	c.SessionMaxAge, _ = parseDays(c.rawSessionMaxAge)
	c.ReauthWindow, _ = parseDays(c.rawReauthWindow)
	c.JobRescueAfter, _ = time.ParseDuration(c.rawJobRescueAfter)
}

// parsePrefixes reads comma-separated CIDRs (a bare address is its own
// /32 or /128).
func parsePrefixes(raw string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(raw, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("want CIDRs such as 10.0.0.0/8, got %q", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// parseDays reads a Go duration or a whole number of days ("365d").
func parseDays(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100*365 {
			return 0, fmt.Errorf("bad number of days %q", n)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(v)
}

// checkPositive accepts a duration above zero (parseDays).
func checkPositive(raw, example string) error {
	if d, err := parseDays(raw); err != nil || d <= 0 {
		return fmt.Errorf("want a duration above 0 such as %s, got %q", example, raw)
	}
	return nil
}

// optional applies check to a value that may be left empty.
func optional(v string, check func(string) error) error {
	if v == "" {
		return nil
	}
	return check(v)
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT, got %q", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

func checkAbsoluteURL(raw string) error {
	if p, err := url.Parse(raw); err != nil || p.Scheme == "" || (p.Host == "" && p.Opaque == "" && p.Path == "") {
		return fmt.Errorf("want an absolute URL, got %q", raw)
	}
	return nil
}

func checkOnOff(raw string) error {
	if raw != "on" && raw != "off" {
		return fmt.Errorf("want on or off, got %q", raw)
	}
	return nil
}

// loadCAs returns the system roots plus the PEM certificates of file; an
// empty file name is nil, the system roots alone.
func loadCAs(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %v", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no PEM certificate in %s", file)
	}
	return pool, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an absolute http(s) URL, got %q", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("must not have a query or fragment: %q", raw)
	}
	return nil
}

// reachable is the address a client on this machine dials for the bound
// address: a listener on every interface (0.0.0.0 or ::, which Go reports
// as [::]) is reached on 127.0.0.1, a usable host for links and the issuer.
func reachable(bound string) string {
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return bound
}

// named is a loopback address as a browser should open it: localhost,
// since browsers refuse passkeys (WebAuthn) on an IP address and treat
// http://localhost as a secure context; the listener stays on the address.
func named(bound string) string {
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return net.JoinHostPort("localhost", port)
	}
	return bound
}

// resolveURLs fills the URL defaults once the listener's address is known.
func (c *Config) resolveURLs(bound string) {
	trim := func(s string) string { return strings.TrimRight(s, "/") }
	if c.BaseURL == "" {
		c.BaseURL = "http://" + named(bound)
	}
	c.BaseURL = trim(c.BaseURL)
	if c.APIURL == "" {
		c.APIURL = c.BaseURL
	}
	c.APIURL = trim(c.APIURL)
	if c.FormsURL == "" {
		c.FormsURL = c.APIURL + "/forms"
	}
	if c.ShortLinkURL == "" {
		c.ShortLinkURL = c.APIURL + "/l"
	}
	if c.MCPURL == "" {
		c.MCPURL = c.APIURL + "/mcp"
	}
	c.MCPURL = trim(c.MCPURL)
	if c.WebURL == "" {
		c.WebURL = c.BaseURL
	}
	c.WebURL = trim(c.WebURL)
	if c.MobileURL == "" {
		c.MobileURL = c.WebURL
	}
	c.MobileURL = trim(c.MobileURL)
}

// app is the service's part of the settings, once resolveURLs has run.
func (c *Config) app() app.Config {
	return app.Config{BaseURL: c.BaseURL, APIURL: c.APIURL, FormsURL: c.FormsURL, ShortLinkURL: c.ShortLinkURL, MCPURL: c.MCPURL,
		WebURL: c.WebURL, MobileURL: c.MobileURL, JWTSecret: c.JWTSecret, EncryptionKey: c.EncryptionKey, RateLimit: c.RateLimit, LocalLimits: c.LocalLimits, MailLimit: c.MailLimit, NoHSTS: !c.HSTS,
		SessionMaxAge: c.SessionMaxAge, ReauthWindow: c.ReauthWindow, JobRescueAfter: c.JobRescueAfter,
		WebhookAllowPrivate: c.WebhookAllowPrivate, MetadataAllowPrivate: c.WebhookAllowPrivate, OutboundCAs: c.OutboundCAs,
		SignRetention: c.SignRetention, Brand: c.Brand, TrustedProxies: c.TrustedProxies, Social: c.Social}
}
