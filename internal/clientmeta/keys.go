package clientmeta

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"

	"github.com/go-jose/go-jose/v4"
)

// KeyAlg is the assertion algorithm a public key serves: RS256 for an RSA
// key of at least 2048 bits, ES256 for a P-256 key, "" for any other.
func KeyAlg(k jose.JSONWebKey) string {
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		if pub.N.BitLen() >= 2048 {
			return string(jose.RS256)
		}
	case *ecdsa.PublicKey:
		if pub.Curve == elliptic.P256() {
			return string(jose.ES256)
		}
	}
	return ""
}

// jsonUnmarshal decodes exactly one JSON value.
func jsonUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return &json.SyntaxError{}
	}
	return nil
}
