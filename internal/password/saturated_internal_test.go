package password

import "testing"

// TestSaturated: the hasher reports itself saturated exactly when the
// waiting queue is full, which is when new hashes are refused (ErrBusy);
// GET /ready turns that into 503.
func TestSaturated(t *testing.T) {
	h := NewHasher(Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 16, SaltLen: 16}, 1)
	if h.Saturated() || h.Waiting() != 0 {
		t.Fatal("an idle hasher is saturated")
	}
	h.waiting.Store(h.maxWait - 1)
	if h.Saturated() {
		t.Error("saturated one short of the bound")
	}
	h.waiting.Store(h.maxWait)
	if !h.Saturated() {
		t.Error("not saturated at the bound")
	}
	h.slots <- struct{}{} // every slot taken: the next hash would wait
	if _, err := h.Hash(t.Context(), "pw"); err != ErrBusy {
		t.Errorf("Hash at the bound: %v; want ErrBusy", err)
	}
}
