package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/internal/app"
	gmail "github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
)

// Config is every setting of CONTRACT §1, read from GATEHOUSE_* variables or
// the kebab-case flag of the same name.
type Config struct {
	Addr                string
	DatabaseURL         string
	BaseURL             string
	APIURL              string
	FormsURL            string
	ShortLinkURL        string
	WebURL              string
	MobileURL           string
	JWTSecret           string
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
	// MailLimit keeps the daily invitation mail limits on; independent of
	// RateLimit, since they protect other people's mailboxes.
	MailLimit       bool
	rawAllowPrivate string
	rawRateLimit    string
	rawMailLimit    string
}

// setting names one variable, its default and where it is stored.
type setting struct {
	env, def string
	dst      *string
}

func (c *Config) settings() []setting {
	return []setting{
		{"GATEHOUSE_ADDR", "127.0.0.1:8080", &c.Addr},
		{"GATEHOUSE_DATABASE_URL", "sqlite:gatehouse.db", &c.DatabaseURL},
		{"GATEHOUSE_BASE_URL", "", &c.BaseURL},
		{"GATEHOUSE_API_URL", "", &c.APIURL},
		{"GATEHOUSE_FORMS_URL", "", &c.FormsURL},
		{"GATEHOUSE_SHORT_LINK_URL", "", &c.ShortLinkURL},
		{"GATEHOUSE_WEB_URL", "", &c.WebURL},
		{"GATEHOUSE_MOBILE_URL", "", &c.MobileURL},
		{"GATEHOUSE_JWT_SECRET", "", &c.JWTSecret},
		{"GATEHOUSE_SMTP_URL", "", &c.SMTPURL},
		{"GATEHOUSE_MAIL_FROM", "Gatehouse <no-reply@localhost>", &c.MailFrom},
		{"GATEHOUSE_DNS_SERVER", "", &c.DNSServer},
		{"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", "false", &c.rawAllowPrivate},
		{"GATEHOUSE_WEBHOOK_CA_FILE", "", &c.WebhookCAFile},
		{"GATEHOUSE_LOG_FORMAT", "text", &c.LogFormat},
		{"GATEHOUSE_RATE_LIMIT", "on", &c.rawRateLimit},
		{"GATEHOUSE_MAIL_LIMIT", "on", &c.rawMailLimit},
	}
}

func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "GATEHOUSE_")), "_", "-")
}

// loadConfig reads the environment, then flags in args, and validates the
// result, reporting every problem at once.
func loadConfig(args []string, getenv func(string) string) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("gatehouse", flag.ContinueOnError)
	fs.SetOutput(discard{})
	for _, s := range c.settings() {
		*s.dst = s.def
		if v, ok := lookup(getenv, s.env); ok {
			*s.dst = v
		}
		fs.StringVar(s.dst, flagName(s.env), *s.dst, s.env)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// validate checks every setting; the error names each bad one.
func (c *Config) validate() error {
	var errs []error
	bad := func(env, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", env, fmt.Sprintf(format, args...)))
	}
	if _, port, err := net.SplitHostPort(c.Addr); err != nil {
		bad("GATEHOUSE_ADDR", "want HOST:PORT, got %q", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("GATEHOUSE_ADDR", "port %q is not a number from 0 to 65535", port)
	}
	if err := sqlstore.ValidateURL(c.DatabaseURL); err != nil {
		bad("GATEHOUSE_DATABASE_URL", "%v", err)
	}
	for _, u := range []struct{ env, val string }{
		{"GATEHOUSE_BASE_URL", c.BaseURL}, {"GATEHOUSE_API_URL", c.APIURL}, {"GATEHOUSE_FORMS_URL", c.FormsURL},
		{"GATEHOUSE_SHORT_LINK_URL", c.ShortLinkURL}, {"GATEHOUSE_WEB_URL", c.WebURL},
	} {
		if u.val != "" {
			if err := checkHTTPURL(u.val); err != nil {
				bad(u.env, "%v", err)
			}
		}
	}
	if c.MobileURL != "" {
		if p, err := url.Parse(c.MobileURL); err != nil || p.Scheme == "" || (p.Host == "" && p.Opaque == "" && p.Path == "") {
			bad("GATEHOUSE_MOBILE_URL", "want an absolute URL, got %q", c.MobileURL)
		}
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		bad("GATEHOUSE_JWT_SECRET", "must be at least 32 bytes, got %d", len(c.JWTSecret))
	}
	if c.SMTPURL != "" {
		if err := gmail.ParseURL(c.SMTPURL); err != nil {
			bad("GATEHOUSE_SMTP_URL", "%v", err)
		}
	}
	if _, err := mail.ParseAddress(c.MailFrom); err != nil {
		bad("GATEHOUSE_MAIL_FROM", "not an address: %q", c.MailFrom)
	}
	if c.DNSServer != "" {
		if _, port, err := net.SplitHostPort(c.DNSServer); err != nil || port == "" {
			bad("GATEHOUSE_DNS_SERVER", "want HOST:PORT, got %q", c.DNSServer)
		}
	}
	if v, err := parseBool(c.rawAllowPrivate); err != nil {
		bad("GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", "want true or false, got %q", c.rawAllowPrivate)
	} else {
		c.WebhookAllowPrivate = v
	}
	if c.WebhookCAFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if pem, err := os.ReadFile(c.WebhookCAFile); err != nil {
			bad("GATEHOUSE_WEBHOOK_CA_FILE", "cannot read: %v", err)
		} else if !pool.AppendCertsFromPEM(pem) {
			bad("GATEHOUSE_WEBHOOK_CA_FILE", "no PEM certificate in %s", c.WebhookCAFile)
		} else {
			c.OutboundCAs = pool
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("GATEHOUSE_LOG_FORMAT", "want text or json, got %q", c.LogFormat)
	}
	for _, s := range []struct {
		env, raw string
		dst      *bool
	}{{"GATEHOUSE_RATE_LIMIT", c.rawRateLimit, &c.RateLimit}, {"GATEHOUSE_MAIL_LIMIT", c.rawMailLimit, &c.MailLimit}} {
		switch s.raw {
		case "on", "off":
			*s.dst = s.raw == "on"
		default:
			bad(s.env, "want on or off, got %q", s.raw)
		}
	}
	return errors.Join(errs...)
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

// resolveURLs fills the URL defaults once the listener's address is known.
func (c *Config) resolveURLs(bound string) {
	trim := func(s string) string { return strings.TrimRight(s, "/") }
	if c.BaseURL == "" {
		c.BaseURL = "http://" + bound
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
	return app.Config{BaseURL: c.BaseURL, APIURL: c.APIURL, FormsURL: c.FormsURL, ShortLinkURL: c.ShortLinkURL,
		WebURL: c.WebURL, MobileURL: c.MobileURL, JWTSecret: c.JWTSecret, RateLimit: c.RateLimit, MailLimit: c.MailLimit,
		WebhookAllowPrivate: c.WebhookAllowPrivate, MetadataAllowPrivate: c.WebhookAllowPrivate, OutboundCAs: c.OutboundCAs}
}
