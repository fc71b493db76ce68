// Package seal encrypts the few secrets Gatehouse must read back (TOTP
// secrets, the bodies of queued mail) with AES-256-GCM. Each purpose has its
// own key, derived with HKDF-SHA256 from one master key of the server's
// configuration, so a key leaked for one purpose opens nothing else.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// MinMasterLen is the shortest master key accepted, in bytes.
const MinMasterLen = 32

// ErrOpen is the answer to a sealed value that does not open: altered,
// sealed for another purpose or context, or under another master key.
var ErrOpen = errors.New("sealed value does not open")

// Box seals and opens values for one purpose.
type Box struct {
	aead cipher.AEAD
}

// New returns the Box of purpose (such as "totp" or "mail") under master.
func New(master []byte, purpose string) (*Box, error) {
	if len(master) < MinMasterLen {
		return nil, fmt.Errorf("encryption key must be at least %d bytes", MinMasterLen)
	}
	key, err := hkdf.Key(sha256.New, master, nil, "gatehouse seal v1 "+purpose, 32)
	if err != nil {
		return nil, fmt.Errorf("derive %s key: %w", purpose, err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain bound to context (such as the owning row's id, so a
// sealed value copied to another row does not open there); the result
// carries its own random nonce.
func (b *Box) Seal(plain, context []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, plain, context)
}

// Open decrypts what Seal returned for the same context.
func (b *Box) Open(sealed, context []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], context)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
