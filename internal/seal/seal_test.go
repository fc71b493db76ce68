package seal

import (
	"bytes"
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	master := bytes.Repeat([]byte("k"), 32)
	totp, err := New(master, "totp")
	if err != nil {
		t.Fatal(err)
	}
	sealed := totp.Seal([]byte("JBSWY3DPEHPK3PXP"), []byte("factor-1"))
	if bytes.Contains(sealed, []byte("JBSWY3DPEHPK3PXP")) {
		t.Fatal("sealed value holds the plain text")
	}
	plain, err := totp.Open(sealed, []byte("factor-1"))
	if err != nil || string(plain) != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	if again := totp.Seal([]byte("JBSWY3DPEHPK3PXP"), []byte("factor-1")); bytes.Equal(again, sealed) {
		t.Error("two seals of one value are equal: the nonce is not random")
	}

	mail, _ := New(master, "mail")
	other, _ := New(bytes.Repeat([]byte("x"), 32), "totp")
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	refused := map[string]func() ([]byte, error){
		"other context":    func() ([]byte, error) { return totp.Open(sealed, []byte("factor-2")) },
		"other purpose":    func() ([]byte, error) { return mail.Open(sealed, []byte("factor-1")) },
		"other master key": func() ([]byte, error) { return other.Open(sealed, []byte("factor-1")) },
		"altered":          func() ([]byte, error) { return totp.Open(flipped, []byte("factor-1")) },
		"truncated":        func() ([]byte, error) { return totp.Open(sealed[:10], []byte("factor-1")) },
	}
	for name, open := range refused {
		if _, err := open(); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: err = %v; want ErrOpen", name, err)
		}
	}
	if _, err := New(master[:31], "totp"); err == nil {
		t.Error("a 31-byte master key was accepted")
	}
}
