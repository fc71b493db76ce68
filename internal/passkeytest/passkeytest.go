// Package passkeytest is a software WebAuthn authenticator for tests and
// the load tool: an ECDSA P-256 key per credential, "none" attestation,
// and the JSON a browser's PublicKeyCredential.toJSON() gives, so the
// server's checks run as they do for a real authenticator.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

var b64 = base64.RawURLEncoding

// Authenticator flags (WebAuthn §6.1).
const (
	FlagUP = 0x01 // user present
	FlagUV = 0x04 // user verified
	FlagBE = 0x08 // backup eligible
	FlagBS = 0x10 // backed up
	FlagAT = 0x40 // attested credential data included
)

// Authenticator answers ceremonies for one origin and RP id; Origin and
// RPID may be changed between calls to play a phishing site.
type Authenticator struct {
	Origin string
	RPID   string
	Flags  byte // UP|UV by default; add BE|BS for a synced passkey
}

// New returns an authenticator for origin and rpID.
func New(origin, rpID string) *Authenticator {
	return &Authenticator{Origin: origin, RPID: rpID, Flags: FlagUP | FlagUV}
}

// Credential is a created key pair: its id, the user handle it was made
// for, and the counter its next assertion reports (0 stays 0, as synced
// passkeys do; set it to test counters).
type Credential struct {
	ID         []byte
	UserHandle []byte
	Key        *ecdsa.PrivateKey
	Count      uint32
}

// Options are the part of a begin answer the authenticator reads.
type Options struct {
	CeremonyID string `json:"ceremony_id"`
	PublicKey  struct {
		Challenge string `json:"challenge"`
		User      struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

// Challenge is the options' challenge.
func (o *Options) Challenge() string { return o.PublicKey.Challenge }

// Create answers a registration: a new credential and the JSON of its
// attestation response.
func (a *Authenticator) Create(o *Options) (*Credential, json.RawMessage, error) {
	handle, err := b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("user id: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	c := &Credential{ID: make([]byte, 16), UserHandle: handle, Key: key}
	rand.Read(c.ID)
	return c, a.Attest(c, o.Challenge()), nil
}

// Attest is the registration response of c to challenge.
func (a *Authenticator) Attest(c *Credential, challenge string) json.RawMessage {
	cose := webauthncose.EC2PublicKeyData{PublicKeyData: webauthncose.PublicKeyData{KeyType: 2, Algorithm: -7}, Curve: 1,
		XCoord: pad32(c.Key.X.Bytes()), YCoord: pad32(c.Key.Y.Bytes())}
	pub, err := webauthncbor.Marshal(cose)
	if err != nil {
		panic(err)
	}
	auth := a.authData(a.Flags|FlagAT, c.Count)
	auth = append(auth, make([]byte, 16)...) // AAGUID: none
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(c.ID)))
	auth = append(auth, c.ID...)
	auth = append(auth, pub...)
	obj, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		panic(err)
	}
	return mustJSON(map[string]any{"id": b64.EncodeToString(c.ID), "rawId": b64.EncodeToString(c.ID), "type": "public-key",
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", challenge)),
			"attestationObject": b64.EncodeToString(obj), "transports": []string{"internal"}}})
}

// Assert is the sign-in response of c to challenge (signed by c's key).
func (a *Authenticator) Assert(c *Credential, challenge string) json.RawMessage {
	return a.AssertWith(c, c.Key, challenge)
}

// AssertWith is Assert signed by key, which may be another credential's.
func (a *Authenticator) AssertWith(c *Credential, key *ecdsa.PrivateKey, challenge string) json.RawMessage {
	auth := a.authData(a.Flags, c.Count)
	client := a.clientData("webauthn.get", challenge)
	sum := sha256.Sum256(client)
	digest := sha256.Sum256(append(append([]byte{}, auth...), sum[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		panic(err)
	}
	return mustJSON(map[string]any{"id": b64.EncodeToString(c.ID), "rawId": b64.EncodeToString(c.ID), "type": "public-key",
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(client), "authenticatorData": b64.EncodeToString(auth),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(c.UserHandle)}})
}

func (a *Authenticator) authData(flags byte, count uint32) []byte {
	rp := sha256.Sum256([]byte(a.RPID))
	out := append(rp[:], flags)
	return binary.BigEndian.AppendUint32(out, count)
}

func (a *Authenticator) clientData(typ, challenge string) []byte {
	return mustJSON(map[string]any{"type": typ, "challenge": challenge, "origin": a.Origin, "crossOrigin": false})
}

func pad32(b []byte) []byte {
	if len(b) >= 32 {
		return b
	}
	return append(make([]byte, 32-len(b)), b...)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
