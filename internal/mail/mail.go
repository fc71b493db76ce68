// Package mail sends Gatehouse's plain-text mail: through the SMTP server
// named by GATEHOUSE_SMTP_URL or, with no SMTP configured, into the log, so
// development needs no mail server.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// defaultFrom is the From header used when Options.From is empty.
const defaultFrom = "Gatehouse <no-reply@localhost>"

// defaultTimeout bounds one message's SMTP exchange when Options.Timeout is
// zero.
const defaultTimeout = 10 * time.Second

// Message is one plain-text mail; Text is sent as text/plain and reaches the
// reader with its links intact. ReplyTo, when set, is the Reply-To address.
// Theirs marks a message in a customer's own words (a form's
// autoresponder): it is queued without our footer (Brand).
type Message struct {
	To, Subject, Text string
	ReplyTo           string
	Theirs            bool `json:",omitempty"`
}

// Sender sends mail.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Options configures New.
type Options struct {
	// URL is smtp://[user:pass@]host:port (STARTTLS when offered) or
	// smtps://[user:pass@]host:port (implicit TLS); empty writes mail to Logger.
	URL string
	// From is the From header, such as "Gatehouse <no-reply@example.com>";
	// empty means "Gatehouse <no-reply@localhost>".
	From string
	// Logger receives mail in log mode; nil means slog.Default().
	Logger *slog.Logger
	// TLSConfig verifies the server; nil means the system roots. Its
	// ServerName defaults to the URL's host.
	TLSConfig *tls.Config
	// Timeout bounds one message's SMTP exchange; zero means 10s.
	Timeout time.Duration
}

// New returns a Sender for o: an SMTP sender when o.URL is set, otherwise one
// that writes each message to the log.
func New(o Options) (Sender, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	rawFrom := o.From
	if rawFrom == "" {
		rawFrom = defaultFrom
	}
	from, err := netmail.ParseAddress(rawFrom)
	if err != nil {
		return nil, fmt.Errorf("mail from address %q: %w", rawFrom, err)
	}
	if o.URL == "" {
		return &logSender{log: logger, from: from}, nil
	}

	srv, err := parseURL(o.URL)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	switch {
	case timeout == 0:
		timeout = defaultTimeout
	case timeout < 0:
		return nil, fmt.Errorf("mail timeout %v is negative", timeout)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLSConfig != nil {
		tlsConfig = o.TLSConfig.Clone()
	}
	if tlsConfig.ServerName == "" {
		tlsConfig.ServerName = srv.host
	}
	return &smtpSender{srv: srv, from: from, tls: tlsConfig, timeout: timeout, log: logger}, nil
}

// ParseURL reports whether raw is a usable GATEHOUSE_SMTP_URL, so start-up can
// refuse a bad one. Empty is valid: it selects log mode. The error never
// repeats the password.
func ParseURL(raw string) error {
	if raw == "" {
		return nil
	}
	_, err := parseURL(raw)
	return err
}

// server is a parsed SMTP URL.
type server struct {
	host     string // without brackets
	port     int
	implicit bool // smtps: TLS from the first byte
	user     string
	password string
}

// addr is host:port, for logs.
func (s server) addr() string {
	return net.JoinHostPort(s.host, strconv.Itoa(s.port))
}

// parseURL parses and checks an SMTP URL.
func parseURL(raw string) (server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, and a part of it can be a password.
		var uerr *url.Error
		if !strings.Contains(raw, "@") && errors.As(err, &uerr) {
			return server{}, fmt.Errorf("smtp url: %w", uerr.Err)
		}
		return server{}, errors.New("smtp url: malformed; percent-encode special characters in the user name and password")
	}
	var s server
	switch u.Scheme {
	case "smtp":
	case "smtps":
		s.implicit = true
	case "":
		return server{}, errors.New("smtp url: scheme missing; want smtp://host:port or smtps://host:port")
	default:
		return server{}, fmt.Errorf("smtp url: scheme %q is not smtp or smtps", u.Scheme)
	}
	if u.Opaque != "" {
		return server{}, errors.New("smtp url: want smtp://host:port or smtps://host:port")
	}
	s.host = u.Hostname()
	if s.host == "" {
		return server{}, errors.New("smtp url: host missing")
	}
	port := u.Port()
	if port == "" {
		usual := "587 for smtp"
		if s.implicit {
			usual = "465 for smtps"
		}
		return server{}, fmt.Errorf("smtp url: port missing (usually %s)", usual)
	}
	s.port, err = strconv.Atoi(port)
	if err != nil || s.port < 1 || s.port > 65535 {
		return server{}, fmt.Errorf("smtp url: port %q out of range", port)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return server{}, errors.New("smtp url: unexpected path, query or fragment")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
		if s.user == "" {
			return server{}, errors.New("smtp url: user name missing before @")
		}
	}
	return s, nil
}

// logSender writes mail to the log instead of sending it.
type logSender struct {
	log  *slog.Logger
	from *netmail.Address
}

// Send logs m at INFO.
func (s *logSender) Send(ctx context.Context, m Message) error {
	s.log.InfoContext(ctx, "mail written to log (no SMTP configured)",
		"from", s.from.String(), "to", m.To, "reply_to", m.ReplyTo, "subject", m.Subject, "text", m.Text)
	return nil
}

// smtpSender sends each message over a new SMTP connection.
type smtpSender struct {
	srv     server
	from    *netmail.Address
	tls     *tls.Config
	timeout time.Duration
	log     *slog.Logger
}

// Send dials the server, sends m and hangs up.
func (s *smtpSender) Send(ctx context.Context, m Message) error {
	if err := s.send(ctx, m); err != nil {
		return fmt.Errorf("send mail: %w", safe(err))
	}
	s.log.DebugContext(ctx, "mail sent", "server", s.srv.addr(), "to", m.To, "subject", m.Subject)
	return nil
}

func (s *smtpSender) send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// go-mail applies its timeout as a connection deadline, which ctx cannot
	// cut short, so the timeout also respects ctx's deadline.
	timeout := s.timeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
		if timeout <= 0 {
			return context.DeadlineExceeded
		}
	}

	msg := gomail.NewMsg()
	msg.FromMailAddress(s.from)
	if err := msg.To(m.To); err != nil {
		return err
	}
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(m.ReplyTo); err != nil {
			return err
		}
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)

	// go-mail joins host and port without brackets, so an IPv6 host needs them.
	host := s.srv.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	opts := []gomail.Option{
		gomail.WithPort(s.srv.port),
		gomail.WithTimeout(timeout),
		gomail.WithTLSConfig(s.tls),
	}
	if s.srv.implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.srv.user != "" {
		// PLAIN or LOGIN, whichever the server offers; go-mail refuses to
		// send either in clear text except to localhost.
		opts = append(opts,
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthPlain, gomail.SMTPAuthLogin),
			gomail.WithUsername(s.srv.user),
			gomail.WithPassword(s.srv.password))
	}
	c, err := gomail.NewClient(host, opts...)
	if err != nil {
		return fmt.Errorf("new client: %w", err)
	}
	return c.DialAndSendWithContext(ctx, msg)
}

// safe drops what go-mail's send errors add to the server's answer: the
// recipients' addresses, and the server's reply text, which may echo
// them. What stays (the step, the reply code and enhanced status code) is
// what a log line of a failed job may show.
func safe(err error) error {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return err
	}
	msg := se.Reason.String()
	if code := se.ErrorCode(); code != 0 {
		msg += fmt.Sprintf(": smtp %d %s", code, se.EnhancedStatusCode())
	}
	return errors.New(msg)
}
