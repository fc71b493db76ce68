package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/token"
)

// userCodeAlphabet has no vowels (no words) and no look-alikes (no 0/O,
// 1/I/L confusion beyond L, which has no digit twin here): RFC 8628 §6.1.
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// newUserCode returns 8 letters of the alphabet as XXXX-XXXX: about 34.6
// bits, enough for a code that lives 10 minutes behind sign-in.
func newUserCode() string {
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == 4 {
			b.WriteByte('-')
		}
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(userCodeAlphabet))))
		if err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		b.WriteByte(userCodeAlphabet[n.Int64()])
	}
	return b.String()
}

// NormalizeUserCode uppercases a typed user code and drops everything that
// is not one of its letters; "" when what is left cannot be a code.
func NormalizeUserCode(typed string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(typed) {
		if strings.ContainsRune(userCodeAlphabet, r) {
			b.WriteRune(r)
		}
	}
	if b.Len() != 8 {
		return ""
	}
	return b.String()
}

// FormatUserCode writes a normalized user code as XXXX-XXXX.
func FormatUserCode(norm string) string {
	if len(norm) != 8 {
		return norm
	}
	return norm[:4] + "-" + norm[4:]
}

type deviceAuthorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
}

// HandleDeviceAuthorization handles "POST /oauth/device/authorization"
// (RFC 8628 §3.1-3.2).
func (s *Server) HandleDeviceAuthorization() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		cors(w)
		form, c, err := s.clientForm(r)
		if err != nil {
			return err
		}
		if !c.allows(GrantDeviceCode) {
			return oauthErr("unauthorized_client", http.StatusBadRequest, "the client is not registered for the device_code grant")
		}
		resource := ""
		if res := form["resource"]; len(res) > 1 {
			return oauthErr("invalid_target", http.StatusBadRequest, "only one resource may be requested")
		} else if len(res) == 1 {
			if !s.knownResource(res[0]) {
				return oauthErr("invalid_target", http.StatusBadRequest, "unknown resource; use %s or a tool API under it", s.apiURL)
			}
			resource = res[0]
		}
		scope, e := requestScope(c, form.Get("scope"))
		if e != nil {
			return e
		}
		device := token.NewSecret("")
		now := s.clock()
		for attempt := 0; ; attempt++ {
			user := newUserCode()
			d := &DeviceCode{DeviceHash: hash(device), UserHash: hash(NormalizeUserCode(user)), ClientID: c.ID, ClientName: c.DisplayName(),
				Scope: scope, Resource: resource, Interval: s.interval, Status: DevicePending,
				CreatedAt: now, ExpiresAt: now.Add(DeviceCodeTTL)}
			err := s.store.CreateDeviceCode(r.Context(), d)
			if errors.Is(err, gatehouse.ErrConflict) && attempt < 5 {
				continue
			}
			if err != nil {
				return serverError(err)
			}
			w.Header().Set("Pragma", "no-cache") // RFC 6749 §5.1
			httpjson.Write(w, http.StatusOK, deviceAuthorization{DeviceCode: device, UserCode: user,
				VerificationURI:         s.issuer + "/device",
				VerificationURIComplete: s.issuer + "/device?user_code=" + user,
				ExpiresIn:               int64(DeviceCodeTTL.Seconds()), Interval: int64(s.interval.Seconds())})
			return nil
		}
	})
}

// deviceGrant polls a device authorization (RFC 8628 §3.4-3.5).
type deviceGrant struct{ s *Server }

func (g deviceGrant) exchange(ctx context.Context, r *tokenRequest) (*identity.SignIn, error) {
	s := g.s
	raw := r.form.Get("device_code")
	if raw == "" {
		return nil, invalidRequest("device_code is required")
	}
	h := hash(raw)
	now := s.clock()
	d, slow, err := s.store.PollDevice(ctx, h, now)
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && d.ClientID != r.client.ID) {
		return nil, invalidGrant("unknown device_code")
	}
	if err != nil {
		return nil, serverError(err)
	}
	if !now.Before(d.ExpiresAt) {
		return nil, oauthErr("expired_token", http.StatusBadRequest, "the device code expired; start again")
	}
	switch d.Status {
	case DeviceDenied:
		return nil, oauthErr("access_denied", http.StatusBadRequest, "the user denied the request")
	case DeviceUsed:
		return nil, invalidGrant("the device code was already used")
	case DevicePending:
		if slow {
			return nil, oauthErr("slow_down", http.StatusBadRequest, "polling too fast; wait %d seconds between requests", int(d.Interval.Seconds()))
		}
		return nil, oauthErr("authorization_pending", http.StatusBadRequest, "the user has not answered yet")
	}
	// Spent in the transaction that opens its session, as a code is.
	var si *identity.SignIn
	err = s.store.Tx(ctx, func(tx Store) error {
		if _, err := tx.UseDevice(ctx, h); errors.Is(err, gatehouse.ErrNotFound) {
			return invalidGrant("the device code was already used")
		} else if err != nil {
			return err
		}
		var err error
		si, err = s.svc.StartGrantSession(ctx, tx.Identity(), d.GrantID, r.meta)
		return err
	})
	if err != nil {
		return nil, grantError(err)
	}
	return si, nil
}

// PendingDevice is a device authorization waiting for the user's answer.
type PendingDevice struct {
	UserCode   string // XXXX-XXXX
	ClientID   string
	ClientName string
	Scope      string
	Resource   string
}

var errNoDevice = gatehouse.Errorf(gatehouse.KindNotFound, "that code is not valid or has expired; check the code on your device")

// LookupDevice finds the pending device authorization of a typed user code.
func (s *Server) LookupDevice(ctx context.Context, typed string) (*PendingDevice, error) {
	norm := NormalizeUserCode(typed)
	if norm == "" {
		return nil, errNoDevice
	}
	d, err := s.store.DeviceByUserHash(ctx, hash(norm))
	if errors.Is(err, gatehouse.ErrNotFound) || (err == nil && (d.Status != DevicePending || !s.clock().Before(d.ExpiresAt))) {
		return nil, errNoDevice
	}
	if err != nil {
		return nil, err
	}
	return &PendingDevice{UserCode: FormatUserCode(norm), ClientID: d.ClientID, ClientName: d.ClientName, Scope: d.Scope, Resource: d.Resource}, nil
}

// DecideDevice records the signed-in user's answer to a device
// authorization: approval grants the chosen workspace, made by a session
// at level lvl that last authenticated at authTime (refused, as Approve
// is, below the workspace's policy).
func (s *Server) DecideDevice(ctx context.Context, typed, userID string, lvl gatehouse.Assurance, authTime time.Time, orgID string, approve bool) error {
	p, err := s.LookupDevice(ctx, typed)
	if err != nil {
		return err
	}
	userHash := hash(NormalizeUserCode(typed))
	if !approve {
		err := s.store.DecideDevice(ctx, userHash, DeviceDenied, userID, "", s.clock())
		if errors.Is(err, gatehouse.ErrNotFound) {
			return errNoDevice
		}
		return err
	}
	d, err := s.store.DeviceByUserHash(ctx, userHash)
	if err != nil {
		return err
	}
	g, err := s.svc.CreateGrant(ctx, identity.GrantInput{UserID: userID, ClientID: p.ClientID, ClientName: p.ClientName,
		OrgID: orgID, Scope: d.Scope, Resource: d.Resource, Level: lvl})
	if err != nil {
		return err
	}
	if err := s.recordOIDC(ctx, g.ID, d.Scope, lvl, authTime); err != nil {
		return err
	}
	err = s.store.DecideDevice(ctx, userHash, DeviceApproved, userID, g.ID, s.clock())
	if errors.Is(err, gatehouse.ErrNotFound) {
		// Answered meanwhile (another tab) or expired: the grant is unused.
		s.svc.RevokeGrantNow(ctx, g.ID, "device code answered twice")
		return errNoDevice
	}
	return err
}
