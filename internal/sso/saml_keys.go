package sso

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/gatehouse/gatehouse"
	"github.com/russellhaering/gosaml2/types"
	dsigtypes "github.com/russellhaering/goxmldsig/types"
)

// SPKeyStore changes a SAML connection's service-provider keys.
type SPKeyStore interface {
	// SetSAMLKeys replaces connection id's sealed keys with keys while
	// they are still old; ErrConflict when they changed meanwhile.
	SetSAMLKeys(ctx context.Context, id string, old, keys []byte) error
}

// Our SAML keys: RSA (every IdP takes RSA-SHA256 signatures and RSA-OAEP
// key transport), in a self-signed certificate whose dates nobody checks
// (SAML trusts the certificate pasted, not a CA), and at most two per
// connection: the one that signs and, during a rotation, its successor.
const (
	spKeyBits   = 2048
	spCertLife  = 20 * 365 * 24 * time.Hour
	maxSPKeys   = 2
	spKeysLabel = "saml-sp-keys:"
)

// spKey is one service-provider key as sealed: a PKCS#8 RSA private key
// and its self-signed certificate, DER.
type spKey struct {
	Key  []byte `json:"key"`
	Cert []byte `json:"cert"`
}

// spCached is a connection's opened keys, kept while its sealed value is
// the same (opening and checking an RSA key costs more than a sign-in's
// signature check).
type spCached struct {
	sealed [sha256.Size]byte
	keys   []tls.Certificate
}

// newSPKey makes a key and its certificate for connection id.
func (s *Service) newSPKey(id string) (spKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, spKeyBits)
	if err != nil {
		return spKey{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return spKey{}, err
	}
	now := s.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: s.SAMLEntityID(id)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(spCertLife),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return spKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return spKey{}, err
	}
	return spKey{Key: der, Cert: cert}, nil
}

// sealSPKeys seals keys to connection id.
func (s *Service) sealSPKeys(id string, keys []spKey) ([]byte, error) {
	raw, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	return s.secrets.Seal(raw, []byte(spKeysLabel+id)), nil
}

// openSPKeys opens c's sealed keys, the signing one first.
func (s *Service) openSPKeys(c *Connection) ([]tls.Certificate, error) {
	sum := sha256.Sum256(c.SealedSPKeys)
	s.mu.Lock()
	cached, ok := s.spKeys[c.ID]
	s.mu.Unlock()
	if ok && cached.sealed == sum {
		return cached.keys, nil
	}
	raw, err := s.secrets.Open(c.SealedSPKeys, []byte(spKeysLabel+c.ID))
	if err != nil {
		return nil, err
	}
	var sealed []spKey
	if err := json.Unmarshal(raw, &sealed); err != nil {
		return nil, err
	}
	if len(sealed) == 0 {
		return nil, errors.New("no keys")
	}
	keys := make([]tls.Certificate, 0, len(sealed))
	for _, k := range sealed {
		pk, err := x509.ParsePKCS8PrivateKey(k.Key)
		if err != nil {
			return nil, err
		}
		rk, ok := pk.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("not an RSA key")
		}
		keys = append(keys, tls.Certificate{Certificate: [][]byte{k.Cert}, PrivateKey: rk})
	}
	s.mu.Lock()
	s.spKeys[c.ID] = spCached{sealed: sum, keys: keys}
	s.mu.Unlock()
	return keys, nil
}

// samlKeys are c's service-provider keys, the signing one first; a
// connection made before it had keys gets one now (once, on every
// instance: the store keeps the first one written).
func (s *Service) samlKeys(ctx context.Context, c *Connection) ([]tls.Certificate, error) {
	if len(c.SealedSPKeys) == 0 {
		if err := s.makeSPKeys(ctx, c); err != nil {
			return nil, gatehouse.Internal("make saml keys", err)
		}
	}
	keys, err := s.openSPKeys(c)
	if err != nil {
		return nil, gatehouse.Internal("open saml keys", err)
	}
	return keys, nil
}

// makeSPKeys gives c its first key, one at a time on this instance so a
// burst of requests makes one key, not one each.
func (s *Service) makeSPKeys(ctx context.Context, c *Connection) error {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	cur, err := s.store.ConnectionByID(ctx, c.ID)
	if err != nil {
		return err
	}
	if len(cur.SealedSPKeys) == 0 {
		k, err := s.newSPKey(c.ID)
		if err != nil {
			return err
		}
		sealed, err := s.sealSPKeys(c.ID, []spKey{k})
		if err != nil {
			return err
		}
		if err := s.store.SetSAMLKeys(ctx, c.ID, nil, sealed); err == nil {
			c.SealedSPKeys = sealed
			return nil
		} else if !errors.Is(err, gatehouse.ErrConflict) {
			return err
		}
		if cur, err = s.store.ConnectionByID(ctx, c.ID); err != nil {
			return err
		}
	}
	c.SealedSPKeys = cur.SealedSPKeys
	return nil
}

// spKeyDescriptors publish keys in our metadata: each for signing (our
// AuthnRequests) and for encryption (the assertions sent to us), with
// the block ciphers we decrypt.
func spKeyDescriptors(keys []tls.Certificate) []types.KeyDescriptor {
	var out []types.KeyDescriptor
	for _, use := range []string{"signing", "encryption"} {
		for _, k := range keys {
			kd := types.KeyDescriptor{Use: use, KeyInfo: dsigtypes.KeyInfo{X509Data: dsigtypes.X509Data{
				X509Certificates: []dsigtypes.X509Certificate{{Data: base64.StdEncoding.EncodeToString(k.Certificate[0])}}}}}
			if use == "encryption" {
				for _, m := range []string{types.MethodAES256GCM, types.MethodAES128GCM, types.MethodAES256CBC, types.MethodAES128CBC} {
					kd.EncryptionMethods = append(kd.EncryptionMethods, types.EncryptionMethod{Algorithm: m})
				}
			}
			out = append(out, kd)
		}
	}
	return out
}

// encryptionAllowed lists the algorithms an encrypted assertion may use:
// AES (GCM or CBC) for the assertion, RSA-OAEP for its key. RSA PKCS#1
// v1.5 key transport (Bleichenbacher's oracle) and triple DES, which
// gosaml2 would also accept, are refused.
var encryptionAllowed = map[string]bool{
	types.MethodAES128GCM: true, types.MethodAES192GCM: true, types.MethodAES256GCM: true,
	types.MethodAES128CBC: true, types.MethodAES256CBC: true,
	types.MethodRSAOAEP: true, types.MethodRSAOAEP2: true,
}

// checkEncryption refuses a response that is not plain XML (the HTTP-POST
// binding never deflates it) or that encrypts with an algorithm we do not
// allow. encrypted says whether it holds an encrypted assertion.
func checkEncryption(raw []byte) (encrypted bool, err error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '<' {
		return false, errors.New("response is not XML")
	}
	if !bytes.Contains(raw, []byte("EncryptedAssertion")) {
		return false, nil
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		return false, err
	}
	// encoding/xml, which gosaml2 reads the algorithms with, ignores
	// prefixes: so does this check.
	for _, m := range doc.FindElements("//*[local-name()='EncryptionMethod']") {
		n := 0
		for _, a := range m.Attr {
			if a.Key == "Algorithm" {
				if !encryptionAllowed[a.Value] {
					return false, errors.New("encryption algorithm not allowed")
				}
				n++
			}
		}
		if n != 1 {
			return false, errors.New("encryption method without one algorithm")
		}
	}
	return true, nil
}

// The steps of a key rotation (RotateSAMLKey).
const (
	// KeyStage adds a second key: published for signing and encryption
	// and decrypting at once, signing nothing yet.
	KeyStage = "stage"
	// KeyPromote retires the signing key: the staged one signs.
	KeyPromote = "promote"
)

var (
	errKeyStaged   = gatehouse.Errorf(gatehouse.KindConflict, "a key is staged already: promote it (once the identity provider has the new certificate) before staging another")
	errKeyNone     = gatehouse.Errorf(gatehouse.KindConflict, "no key is staged: stage one and give the identity provider its certificate first")
	errKeysChanged = gatehouse.Errorf(gatehouse.KindConflict, "the connection's keys changed meanwhile; read them again")
)

// RotateSAMLKey takes one step of the rotation of SAML connection id's
// own key (KeyStage, then KeyPromote once the identity provider reads
// the new certificate from our metadata or has it pasted), for owners
// and admins who signed in recently; audited.
func (s *Service) RotateSAMLKey(ctx context.Context, p *gatehouse.Principal, orgID, id, step string) (*Connection, error) {
	if step != KeyStage && step != KeyPromote {
		return nil, gatehouse.InvalidField("step", "step must be stage or promote")
	}
	if err := s.id.RequireRecentAuth(ctx, p, "rotate a SAML key"); err != nil {
		return nil, err
	}
	if _, err := s.ws.ManageSettings(ctx, s.store, p, orgID); err != nil {
		return nil, err
	}
	c, err := connOf(ctx, s.store, orgID, id)
	if err != nil {
		return nil, err
	}
	if c.SAML == nil {
		return nil, errNotSAML
	}
	if _, err := s.samlKeys(ctx, c); err != nil { // a connection made before keys gets its first
		return nil, err
	}
	raw, err := s.secrets.Open(c.SealedSPKeys, []byte(spKeysLabel+c.ID))
	if err != nil {
		return nil, gatehouse.Internal("open saml keys", err)
	}
	var keys []spKey
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, gatehouse.Internal("open saml keys", err)
	}
	switch {
	case step == KeyStage && len(keys) >= maxSPKeys:
		return nil, errKeyStaged
	case step == KeyStage:
		k, err := s.newSPKey(c.ID)
		if err != nil {
			return nil, gatehouse.Internal("make saml key", err)
		}
		keys = append(keys, k)
	case len(keys) < 2:
		return nil, errKeyNone
	default:
		keys = keys[1:]
	}
	sealed, err := s.sealSPKeys(c.ID, keys)
	if err != nil {
		return nil, gatehouse.Internal("seal saml keys", err)
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if _, err := s.ws.ManageSettings(ctx, tx, p, orgID); err != nil {
			return err
		}
		if err := tx.SetSAMLKeys(ctx, c.ID, c.SealedSPKeys, sealed); errors.Is(err, gatehouse.ErrConflict) {
			return errKeysChanged
		} else if err != nil {
			return gatehouse.Internal("set saml keys", err)
		}
		action := "sso.saml_key_staged"
		if step == KeyPromote {
			action = "sso.saml_key_promoted"
		}
		return s.ws.Audit(ctx, tx, orgID, p.UserID, action, "sso_connection", c.ID,
			map[string]any{"signing_certificate": fingerprint(keys[0].Cert), "certificates": len(keys)})
	})
	if err != nil {
		return nil, err
	}
	c.SealedSPKeys = sealed
	return c, nil
}

// fingerprint is a certificate's SHA-256, hex with colons as IdP
// consoles show it.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	var b strings.Builder
	for i, x := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", x)
	}
	return b.String()
}

// SPCertificate is one of a SAML connection's own (service-provider)
// certificates as the console shows it: PEM to download, its SHA-256
// fingerprint, when it was made, and whether it signs (else it is the
// staged next one).
type SPCertificate struct {
	PEM     string
	SHA256  string
	Created time.Time
	Signing bool
}

// SAMLCertificates are SAML connection c's own certificates, the signing
// one first; a connection made before it had keys gets its first now, as
// when its metadata is read. c is one the caller may see (Connection).
func (s *Service) SAMLCertificates(ctx context.Context, c *Connection) ([]SPCertificate, error) {
	if c.SAML == nil {
		return nil, errNotSAML
	}
	keys, err := s.samlKeys(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]SPCertificate, 0, len(keys))
	for i, k := range keys {
		cert, err := x509.ParseCertificate(k.Certificate[0])
		if err != nil {
			return nil, gatehouse.Internal("parse saml certificate", err)
		}
		// newSPKey dates a certificate an hour back (clock skew at the IdP).
		out = append(out, SPCertificate{PEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.Certificate[0]})),
			SHA256: fingerprint(k.Certificate[0]), Created: cert.NotBefore.Add(time.Hour), Signing: i == 0})
	}
	return out, nil
}

// spCertJSON is one of a connection's own certificates as answered: PEM
// to paste, its fingerprint, and whether it signs (else it is staged).
type spCertJSON struct {
	Certificate string `json:"certificate"`
	SHA256      string `json:"sha256"`
	Signing     bool   `json:"signing"`
}

// spCertificates are c's own certificates, the signing one first (none
// before they are made).
func (s *Service) spCertificates(c *Connection) []spCertJSON {
	out := []spCertJSON{}
	if len(c.SealedSPKeys) == 0 {
		return out
	}
	keys, err := s.openSPKeys(c)
	if err != nil {
		s.log.Error("open saml keys", "connection", c.ID, "err", err)
		return out
	}
	for i, k := range keys {
		out = append(out, spCertJSON{Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.Certificate[0]})),
			SHA256: fingerprint(k.Certificate[0]), Signing: i == 0})
	}
	return out
}
