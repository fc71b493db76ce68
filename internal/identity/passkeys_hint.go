package identity

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// A usernameless sign-in's ceremony id carries its session: the random
// secret, the challenge and the user verification asked for, joined by
// dots. The row stays the authority (the id's hash names it, so a changed
// challenge names no row, and the finish's transaction uses it in one
// statement that returns its session to compare); the id only spares the
// finish its read of the row before the assertion check (docs/decisions.md).
const hintSep = "."

// sessionHint is the part of id after the secret for session, and
// whether session is one the hint rebuilds exactly (a usernameless
// sign-in of this RP with nothing else set); raw is session as stored.
func (s *Service) sessionHint(session *webauthn.SessionData, raw []byte) (string, bool) {
	if strings.Contains(session.Challenge, hintSep) || strings.Contains(string(session.UserVerification), hintSep) {
		return "", false
	}
	hint := session.Challenge + hintSep + string(session.UserVerification)
	rebuilt, err := json.Marshal(s.hintedSession(session.Challenge, session.UserVerification))
	if err != nil || !bytes.Equal(rebuilt, raw) {
		return "", false
	}
	return hint, true
}

// hintedSession is the session of a usernameless sign-in with challenge
// and uv, as BeginDiscoverableLogin makes it.
func (s *Service) hintedSession(challenge string, uv protocol.UserVerificationRequirement) *webauthn.SessionData {
	return &webauthn.SessionData{Challenge: challenge, RelyingPartyID: s.rp.Config.RPID, UserVerification: uv}
}

// hintedCeremony is the session a usernameless ceremony id carries and
// its stored form, or false for an id without one (a registration, a
// second-factor check, one begun before ids carried it).
func (s *Service) hintedCeremony(id string) (*webauthn.SessionData, []byte, bool) {
	if id == "" || len(id) > 200 {
		return nil, nil, false
	}
	parts := strings.Split(id, hintSep)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return nil, nil, false
	}
	session := s.hintedSession(parts[1], protocol.UserVerificationRequirement(parts[2]))
	raw, err := json.Marshal(session)
	if err != nil {
		return nil, nil, false
	}
	return session, raw, true
}
