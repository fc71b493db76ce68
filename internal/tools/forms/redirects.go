package forms

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/outbound"
)

// MaxRedirectOrigins bounds a form's redirectOrigins (docs/decisions.md).
const MaxRedirectOrigins = 10

// A submission's _next is followed only to an origin the form's owner
// listed in redirectOrigins; any other is ignored and the submitter gets
// the plain answer ({ok: true}), so the public submit endpoint on our
// origin redirects nowhere a stranger chooses.

// redirectOrigins checks and normalizes a form's redirectOrigins: each an
// https origin (scheme, host and an optional port; no path, query,
// fragment or user), written "https://host[:port]" in lower case without
// the default port, duplicates dropped.
func redirectOrigins(in []string) ([]string, error) {
	if len(in) > MaxRedirectOrigins {
		return nil, gatehouse.Invalid("redirectOrigins has at most %d origins", MaxRedirectOrigins)
	}
	out := []string{}
	for _, raw := range in {
		o, ok := httpsOrigin(raw)
		if !ok {
			return nil, gatehouse.Invalid("redirectOrigins: %q is not an https origin such as https://example.com", truncate(raw, 80))
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// httpsOrigin is raw as an origin when it is exactly one (an https URL
// with a host, an optional valid port and nothing after it).
func httpsOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.User != nil || u.Host == "" || u.Hostname() == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", false
	}
	return origin(u)
}

// origin is u's origin, normalized; false when its port is not valid.
func origin(u *url.URL) (string, bool) {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", false
		}
	}
	if port == "" || port == "443" {
		return "https://" + host, true
	}
	return "https://" + host + ":" + port, true
}

// nextAllowed reports whether the submitter may be sent on to next, an
// absolute http(s) URL: only to an https origin the form lists.
func (f *Form) nextAllowed(next string) bool {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return false
	}
	o, ok := origin(u)
	return ok && slices.Contains(f.RedirectOrigins, o)
}

// UpdateInput is the body of a form update; nil fields are left as they
// are.
type UpdateInput struct {
	RedirectOrigins *[]string `json:"redirectOrigins"`
}

// Update changes a form of the caller's workspace: its redirectOrigins.
func (s *Service) Update(ctx context.Context, p *gatehouse.Principal, id string, in *UpdateInput) (*Form, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if in.RedirectOrigins == nil {
		return f, nil
	}
	if f.RedirectOrigins, err = redirectOrigins(*in.RedirectOrigins); err != nil {
		return nil, err
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.UpdateForm(ctx, f); err != nil {
			return gatehouse.Internal("update form", err)
		}
		return s.audit(ctx, tx, p, f, "form.updated", "form", f.ID, map[string]any{"redirectOrigins": f.RedirectOrigins})
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// checkNext reads a submission's _next: "" when absent; 400 when it is no
// absolute http(s) URL.
func checkNext(next string) (string, error) {
	if next == "" {
		return "", nil
	}
	out, ok := outbound.ParseURL(next, MaxNext, "http", "https")
	if !ok {
		return "", gatehouse.Invalid("_next must be an absolute http(s) URL of at most %d bytes", MaxNext)
	}
	return out, nil
}
