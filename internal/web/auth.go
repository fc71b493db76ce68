package web

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// handleHealth handles "GET /health": 200 while the database answers, 503
// when it does not.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Health(r.Context()); err != nil {
		s.log.Warn("health: database not answering", "err", err)
		httpjson.Write(w, http.StatusServiceUnavailable, errorBody{"database is not answering"})
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	return nil
}

// handleRegister handles "POST /v1/auth/register".
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		Name     string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	si, err := s.svc.Register(r.Context(), accounts.RegisterInput{Email: in.Email, Password: in.Password, Name: in.Name}, sessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleLogin handles "POST /v1/auth/login". Besides the per-IP limit, a
// locked account's guesses are bounded (lockout).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	si, err := s.svc.Login(r.Context(), in.Email, in.Password, sessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleMagicLink handles "POST /v1/auth/magic-link".
func (s *Server) handleMagicLink(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email  string `json:"email"`
		Client string `json:"client"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	key, _, err := gatehouse.ParseEmail(in.Email)
	if err != nil {
		return err
	}
	if ok, wait := s.Limiter("magicPerEmail", 5, 2*time.Minute).Allow(key); !ok {
		return gatehouse.TooMany(wait)
	}
	if err := s.svc.RequestMagicLink(r.Context(), in.Email, in.Client); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"if the address can sign in, a link is on its way"})
	return nil
}

type tokenInput struct {
	Token string `json:"token"`
}

// handleMagicLinkVerify handles "POST /v1/auth/magic-link/verify".
func (s *Server) handleMagicLinkVerify(w http.ResponseWriter, r *http.Request) error {
	var in tokenInput
	if err := decode(r, &in); err != nil {
		return err
	}
	si, err := s.svc.VerifyMagicLink(r.Context(), in.Token, sessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleVerifyEmail handles "POST /v1/auth/verify-email".
func (s *Server) handleVerifyEmail(w http.ResponseWriter, r *http.Request) error {
	var in tokenInput
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := s.svc.VerifyEmail(r.Context(), in.Token)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Message string   `json:"message"`
		User    userJSON `json:"user"`
	}{"email verified", toUser(u)})
	return nil
}

type refreshInput struct {
	RefreshToken string `json:"refresh_token"`
}

// handleRefresh handles "POST /v1/auth/refresh".
func (s *Server) handleRefresh(w http.ResponseWriter, r *http.Request) error {
	var in refreshInput
	if err := decode(r, &in); err != nil {
		return err
	}
	si, err := s.svc.Refresh(r.Context(), in.RefreshToken)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleLogout handles "POST /v1/auth/logout".
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	// Logout answers 200 whatever it is sent: a body that does not hold a
	// refresh token signs nothing out.
	var in refreshInput
	if err := decode(r, &in); err != nil {
		in.RefreshToken = ""
	}
	if err := s.svc.Logout(r.Context(), in.RefreshToken); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"signed out"})
	return nil
}

// handleSwitchOrg handles "POST /v1/auth/switch-org".
func (s *Server) handleSwitchOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		OrgID string `json:"org_id"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.svc.SwitchOrg(r.Context(), p, in.OrgID)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toOrgToken(t))
	return nil
}

// handleMe handles "GET /v1/auth/me".
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	u, oc, err := s.svc.Me(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		User userJSON       `json:"user"`
		Org  orgContextJSON `json:"org"`
	}{toUser(u), toOrgContext(oc)})
	return nil
}

// handleVerify handles "GET /v1/auth/verify".
func (s *Server) handleVerify(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	u, err := s.svc.VerifyUser(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Valid   bool   `json:"valid"`
		UserID  string `json:"user_id"`
		Email   string `json:"email"`
		Name    string `json:"name"`
		OrgID   string `json:"org_id"`
		OrgRole string `json:"org_role"`
	}{true, u.ID, u.Email, u.Name, p.OrgID, p.Role})
	return nil
}
