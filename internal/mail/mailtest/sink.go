// Package mailtest provides an in-process SMTP sink so tests can send real
// mail over the loopback interface and read back what arrived.
package mailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Received is one message accepted by a Sink.
type Received struct {
	// From is the message's From header, decoded.
	From string
	// To holds the envelope recipients (RCPT TO).
	To []string
	// Subject is the decoded Subject header.
	Subject string
	// ReplyTo is the address of the Reply-To header ("" when absent).
	ReplyTo string
	// Text is the decoded text/plain part with line endings normalized to "\n".
	Text string
	// Raw is the message exactly as it came in DATA.
	Raw []byte
	// TLS reports whether the connection was encrypted when DATA came, by
	// STARTTLS or implicit TLS.
	TLS bool
	// Username and Password are the AUTH PLAIN credentials the client gave,
	// empty when it did not authenticate.
	Username, Password string
}

// Sink is an SMTP server on 127.0.0.1 that keeps every message it accepts.
type Sink struct {
	scheme string
	addr   string

	mu       sync.Mutex
	msgs     []Received
	arrived  chan struct{} // closed and replaced when a message arrives
	failing  bool
	rejectTo bool
	serveErr chan error
}

// Start starts a plain SMTP sink that offers AUTH PLAIN but not STARTTLS;
// it is closed when the test ends.
func Start(t testing.TB) *Sink {
	t.Helper()
	return start(t, "smtp", nil, nil)
}

// StartTLS starts a sink that offers STARTTLS with a self-signed certificate
// made in memory, and returns a client tls.Config that trusts it.
func StartTLS(t testing.TB) (*Sink, *tls.Config) {
	t.Helper()
	server, client := tlsConfigs(t)
	return start(t, "smtp", server, nil), client
}

// StartImplicitTLS starts an smtps sink, TLS from the first byte, and
// returns a client tls.Config that trusts its certificate.
func StartImplicitTLS(t testing.TB) (*Sink, *tls.Config) {
	t.Helper()
	server, client := tlsConfigs(t)
	return start(t, "smtps", nil, server), client
}

// start listens on 127.0.0.1:0; starttls is offered through STARTTLS and
// implicit wraps the listener.
func start(t testing.TB, scheme string, starttls, implicit *tls.Config) *Sink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	s := &Sink{
		scheme:   scheme,
		addr:     l.Addr().String(),
		arrived:  make(chan struct{}),
		serveErr: make(chan error, 1),
	}
	if implicit != nil {
		l = tls.NewListener(l, implicit)
	}

	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{sink: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.TLSConfig = starttls
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.MaxMessageBytes = 10 << 20
	srv.ErrorLog = log.New(io.Discard, "", 0)

	go func() { s.serveErr <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		// Close can run before Serve has registered l (a test that never
		// dials), leaving Serve in Accept forever: close l too; Serve then
		// sees the server done and returns nil.
		l.Close()
		if err := <-s.serveErr; err != nil {
			t.Errorf("mailtest: serve: %v", err)
		}
	})
	return s
}

// URL returns the sink's address as "smtp://127.0.0.1:PORT" or
// "smtps://127.0.0.1:PORT".
func (s *Sink) URL() string {
	return s.scheme + "://" + s.addr
}

// Messages returns every message received so far, oldest first.
func (s *Sink) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.msgs...)
}

// WaitFor returns the first message addressed to the envelope recipient to
// (compared case-insensitively), waiting up to timeout for it to arrive; it
// fails the test when none does.
func (s *Sink) WaitFor(t testing.TB, to string, timeout time.Duration) Received {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for _, m := range s.msgs {
			for _, rcpt := range m.To {
				if strings.EqualFold(rcpt, to) {
					s.mu.Unlock()
					return m
				}
			}
		}
		arrived := s.arrived
		s.mu.Unlock()

		select {
		case <-arrived:
		case <-timer.C:
			t.Fatalf("mailtest: no message to %s after %v; got %d other messages", to, timeout, len(s.Messages()))
			return Received{}
		}
	}
}

// SetFailing makes the sink reject DATA with a permanent 554 error while
// failing is true, so callers can test what happens when mail cannot be sent.
func (s *Sink) SetFailing(failing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = failing
}

// SetRejectRecipients makes the sink refuse every RCPT TO with a 550
// whose text repeats the address, as real servers do, while reject is true.
func (s *Sink) SetRejectRecipients(reject bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectTo = reject
}

func (s *Sink) rejectsRecipients() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejectTo
}

func (s *Sink) isFailing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing
}

func (s *Sink) add(m Received) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// session is one SMTP connection to a Sink.
type session struct {
	sink               *Sink
	conn               *smtp.Conn
	username, password string
	to                 []string
}

var _ smtp.AuthSession = (*session)(nil)

// AuthMechanisms offers AUTH PLAIN.
func (c *session) AuthMechanisms() []string {
	return []string{sasl.Plain}
}

// Auth accepts any credentials and remembers them.
func (c *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		c.username, c.password = username, password
		return nil
	}), nil
}

// Mail starts a message.
func (c *session) Mail(string, *smtp.MailOptions) error {
	c.to = nil
	return nil
}

// Rcpt adds a recipient.
func (c *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if c.sink.rejectsRecipients() {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "<" + to + ">: recipient address rejected"}
	}
	c.to = append(c.to, to)
	return nil
}

// Data reads, decodes and keeps the message, or rejects it when the sink is
// failing or the message cannot be parsed.
func (c *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if c.sink.isFailing() {
		return &smtp.SMTPError{
			Code:         554,
			EnhancedCode: smtp.EnhancedCode{5, 3, 0},
			Message:      "mailtest: sink is set to fail",
		}
	}
	m, err := parse(raw)
	if err != nil {
		return &smtp.SMTPError{
			Code:         554,
			EnhancedCode: smtp.EnhancedCode{5, 6, 0},
			Message:      "mailtest: " + err.Error(),
		}
	}
	m.To = append([]string(nil), c.to...)
	_, m.TLS = c.conn.TLSConnectionState()
	m.Username, m.Password = c.username, c.password
	c.sink.add(m)
	return nil
}

// Reset discards the message in progress.
func (c *session) Reset() { c.to = nil }

// Logout ends the session.
func (c *session) Logout() error { return nil }

// parse decodes the headers and the text/plain part of a raw message.
func parse(raw []byte) (Received, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Received{}, fmt.Errorf("read message: %w", err)
	}
	var dec mime.WordDecoder
	from, err := dec.DecodeHeader(msg.Header.Get("From"))
	if err != nil {
		return Received{}, fmt.Errorf("decode from: %w", err)
	}
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return Received{}, fmt.Errorf("decode subject: %w", err)
	}
	replyTo := ""
	if h := msg.Header.Get("Reply-To"); h != "" {
		a, err := mail.ParseAddress(h)
		if err != nil {
			return Received{}, fmt.Errorf("parse reply-to: %w", err)
		}
		replyTo = a.Address
	}
	text, err := textPart(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	if err != nil {
		return Received{}, err
	}
	return Received{
		From:    from,
		Subject: subject,
		ReplyTo: replyTo,
		Text:    strings.ReplaceAll(text, "\r\n", "\n"),
		Raw:     raw,
	}, nil
}

// textPart returns the first text/plain body found in an entity, descending
// into multipart entities.
func textPart(contentType, encoding string, body io.Reader) (string, error) {
	if contentType == "" {
		contentType = "text/plain"
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", fmt.Errorf("parse content type: %w", err)
	}
	switch {
	case mediaType == "text/plain":
		b, err := io.ReadAll(decode(encoding, body))
		if err != nil {
			return "", fmt.Errorf("decode %s body: %w", encoding, err)
		}
		return string(b), nil
	case strings.HasPrefix(mediaType, "multipart/"):
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return "", errors.New("no text/plain part")
			}
			if err != nil {
				return "", fmt.Errorf("read part: %w", err)
			}
			text, err := textPart(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			if err == nil {
				return text, nil
			}
		}
	default:
		return "", fmt.Errorf("no text/plain part in %s", mediaType)
	}
}

// decode undoes a Content-Transfer-Encoding.
func decode(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r) // skips CR and LF itself
	default:
		return r
	}
}

// tlsConfigs makes a self-signed certificate for 127.0.0.1 and localhost and
// returns a server config that presents it and a client config that trusts it.
func tlsConfigs(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("mailtest: generate key: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatalf("mailtest: serial: %v", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("mailtest: create certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("mailtest: parse certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion:   tls.VersionTLS12,
	}
	client = &tls.Config{
		RootCAs:    pool,
		ServerName: "127.0.0.1",
		MinVersion: tls.VersionTLS12,
	}
	return server, client
}
