package oauth

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/outbound"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document,
// the registration the MCP authorization spec prefers): a client_id that is
// an https URL names a JSON document of the client's metadata, fetched and
// cached here.
const (
	metadataMaxBytes   = 64 << 10
	metadataTimeout    = 5 * time.Second
	metadataDefaultTTL = 5 * time.Minute
	metadataMaxTTL     = 24 * time.Hour
	metadataMaxEntries = 1000
	// metadataFailureTTL is how long a failed fetch is remembered, so a
	// prober cannot make Gatehouse hit a host on every request.
	metadataFailureTTL = time.Minute
)

// errMetadataDocument is the one answer to every failed fetch: what the
// remote host answered is logged, never told to whoever asked.
var errMetadataDocument = invalidClient("the client metadata document could not be fetched or is not valid")

type metadataDocuments struct {
	client *http.Client
	log    *slog.Logger
	// perIP and perHost limit fetches (cache misses) per requester IP and
	// per document host; nil allows every fetch.
	perIP, perHost *ratelimit.Limiter
	mu             sync.Mutex
	cache          map[string]cachedClient
}

// cachedClient is a fetched client, or a failed fetch when client is nil.
type cachedClient struct {
	client  *Client
	expires time.Time
}

// limit turns on the fetch limits (docs/decisions.md): per requester IP 10
// then one per 6 s, per host 30 then one per 2 s.
func (m *metadataDocuments) limit(now func() time.Time) {
	m.perIP = ratelimit.New(10, 6*time.Second, now)
	m.perHost = ratelimit.New(30, 2*time.Second, now)
}

// newMetadataDocuments returns the fetcher. Its transport refuses to dial
// loopback, private, link-local and other non-public addresses unless
// allowPrivate (GATEHOUSE_WEBHOOK_ALLOW_PRIVATE), checked on the address
// actually dialed so DNS rebinding cannot slip past.
func newMetadataDocuments(c *http.Client, allowPrivate bool, roots *x509.CertPool, log *slog.Logger) *metadataDocuments {
	var base *http.Transport
	if c != nil {
		base, _ = c.Transport.(*http.Transport)
	}
	transport := outbound.Transport(base, allowPrivate, roots, metadataTimeout)
	return &metadataDocuments{log: log, cache: map[string]cachedClient{}, client: &http.Client{
		Transport: transport,
		Timeout:   metadataTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("client metadata documents must not redirect")
		},
	}}
}

// Client returns the client named by id: a registered client, or the
// metadata document at an https client_id URL, fetched for the requester
// at ip. Unknown clients give an invalid_client *Error, too many fetches a
// too_many_requests one.
func (s *Server) Client(ctx context.Context, id, ip string) (*Client, error) {
	if strings.Contains(id, "://") {
		return s.cimd.get(ctx, id, ip, s.clock())
	}
	if len(id) > 64 {
		return nil, invalidClient("unknown client")
	}
	if strings.HasPrefix(id, workspace.ClientIDPrefix) {
		return s.application(ctx, id)
	}
	c, err := s.store.ClientByID(ctx, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, invalidClient("unknown client")
	}
	if err != nil {
		return nil, serverError(err)
	}
	return c, nil
}

// checkClientIDURL applies the draft's rules to a client_id URL: https, a
// path, no fragment, credentials or dot segments.
func checkClientIDURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || len(raw) > MaxParam {
		return errors.New("a URL client_id must be an https URL")
	}
	if u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil || strings.Contains(raw, "#") {
		return errors.New("a URL client_id needs a path and no fragment or credentials")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return errors.New("a URL client_id must not have dot segments")
		}
	}
	return nil
}

func (m *metadataDocuments) get(ctx context.Context, id, ip string, now time.Time) (*Client, error) {
	if err := checkClientIDURL(id); err != nil {
		return nil, invalidClient("%v", err)
	}
	m.mu.Lock()
	e, ok := m.cache[id]
	m.mu.Unlock()
	switch {
	case ok && now.Before(e.expires) && e.client == nil:
		return nil, errMetadataDocument
	case ok && now.Before(e.expires):
		return e.client, nil
	}
	if ok, wait := m.perIP.Allow(ip); !ok {
		return nil, tooManyRequests(wait)
	}
	u, _ := url.Parse(id)
	if ok, wait := m.perHost.Allow(strings.ToLower(u.Hostname())); !ok {
		return nil, tooManyRequests(wait)
	}
	c, ttl, err := m.fetch(ctx, id, now)
	if err != nil {
		m.log.Info("client metadata document refused", "client_id", id, "err", err)
		m.store(id, cachedClient{expires: now.Add(metadataFailureTTL)}, now)
		return nil, errMetadataDocument
	}
	if ttl > 0 {
		m.store(id, cachedClient{client: c, expires: now.Add(ttl)}, now)
	}
	return c, nil
}

// store caches e under id, making room among at most metadataMaxEntries.
func (m *metadataDocuments) store(id string, e cachedClient, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cache) >= metadataMaxEntries {
		for k, old := range m.cache {
			if !now.Before(old.expires) || len(m.cache) >= metadataMaxEntries {
				delete(m.cache, k)
			}
		}
	}
	m.cache[id] = e
}

func (m *metadataDocuments) fetch(ctx context.Context, id string, now time.Time) (*Client, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := m.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("fetch: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("answered HTTP %d", res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, metadataMaxBytes+1))
	if err != nil {
		return nil, 0, errors.New("could not be read")
	}
	if len(body) > metadataMaxBytes {
		return nil, 0, fmt.Errorf("is larger than %d bytes", metadataMaxBytes)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, 0, errors.New("is not a JSON object")
	}
	for _, banned := range []string{"client_secret", "client_secret_expires_at"} {
		if _, ok := raw[banned]; ok {
			return nil, 0, fmt.Errorf("must not contain %s", banned)
		}
	}
	var md clientMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, 0, errors.New("has fields of the wrong type")
	}
	if md.ClientID != id {
		return nil, 0, errors.New("its client_id differs from its URL")
	}
	if err := md.validate(); err != nil {
		var e *Error
		errors.As(err, &e)
		return nil, 0, errors.New(e.Description)
	}
	doc, _ := json.Marshal(md)
	c := md.client(id, doc, now)
	c.RedirectsErrors = true // its redirect URIs are published under its own https origin
	return c, cacheTTL(res.Header.Get("Cache-Control")), nil
}

// cacheTTL reads how long a document may be cached: max-age capped at 24 h,
// nothing for no-store or no-cache, 5 minutes when the server says nothing.
func cacheTTL(cc string) time.Duration {
	ttl := metadataDefaultTTL
	for _, d := range strings.Split(cc, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return 0
		case strings.HasPrefix(d, "max-age="):
			n, err := strconv.Atoi(strings.TrimPrefix(d, "max-age="))
			if err != nil || n < 0 {
				return 0
			}
			ttl = time.Duration(n) * time.Second
		}
	}
	return min(ttl, metadataMaxTTL)
}
