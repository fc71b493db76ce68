package password

import (
	"context"
	"strings"
	"testing"
)

var cheap = Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}

func TestHashVerify(t *testing.T) {
	ctx := context.Background()
	h := NewHasher(cheap, 2)
	enc, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("encoding = %q", enc)
	}
	if ok, rehash, err := h.Verify(ctx, "correct horse", enc); !ok || rehash || err != nil {
		t.Fatalf("Verify(right) = %v, %v, %v; want true, false, nil", ok, rehash, err)
	}
	if ok, _, _ := h.Verify(ctx, "wrong horse", enc); ok {
		t.Fatal("Verify(wrong) = true")
	}
	enc2, _ := h.Hash(ctx, "correct horse")
	if enc2 == enc {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
}

func TestVerifyEmptyHashNeverMatches(t *testing.T) {
	h := NewHasher(cheap, 1)
	for _, pw := range []string{"", "x", "anything at all"} {
		if ok, _, err := h.Verify(context.Background(), pw, ""); ok || err != nil {
			t.Fatalf("Verify(%q, \"\") = %v, %v; want false, nil", pw, ok, err)
		}
	}
}

func TestRehashWhenParamsRaised(t *testing.T) {
	ctx := context.Background()
	old := NewHasher(cheap, 1)
	enc, _ := old.Hash(ctx, "pw123456")
	stronger := cheap
	stronger.Memory = 128
	ok, rehash, err := NewHasher(stronger, 1).Verify(ctx, "pw123456", enc)
	if !ok || !rehash || err != nil {
		t.Fatalf("Verify with raised params = %v, %v, %v; want true, true, nil", ok, rehash, err)
	}
}

func TestMalformedHash(t *testing.T) {
	h := NewHasher(cheap, 1)
	for _, enc := range []string{"plain", "$argon2i$v=19$m=64,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=x$AAAA$AAAA"} {
		if _, _, err := h.Verify(context.Background(), "pw", enc); err == nil {
			t.Errorf("Verify(%q) err = nil; want error", enc)
		}
	}
}

func BenchmarkHashOWASP(b *testing.B) {
	h := NewHasher(OWASP, 1)
	for b.Loop() {
		h.Hash(context.Background(), "correct horse battery")
	}
}

func TestBusyWhenQueueFull(t *testing.T) {
	h := NewHasher(cheap, 1)
	h.maxWait = 0 // no queue: a second concurrent hash is refused
	h.slots <- struct{}{}
	defer func() { <-h.slots }()
	if _, err := h.Hash(context.Background(), "pw"); err != ErrBusy {
		t.Fatalf("Hash with a full queue err = %v; want ErrBusy", err)
	}
}
