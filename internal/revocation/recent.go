package revocation

import (
	"hash/maphash"
	"sync/atomic"
)

// minOverlay is the fewest slots an overlay has.
const minOverlay = 1024

// overlay holds the entries added since the base was built: an
// open-addressing hash table (linear probing) whose slots are atomic
// pointers. One writer at a time (under List.mu) fills an empty slot or,
// for a membership removed again, swaps in the later entry; readers probe
// with atomic loads, without a lock or an allocation. Entries are never
// removed: the overlay is dropped whole when merged into a new base. It
// is full at half its slots, so every probe ends at an empty slot.
type overlay struct {
	seed  maphash.Seed
	slots []atomic.Pointer[Entry]
	n     atomic.Int32 // entries held
}

// newOverlay returns an empty overlay that fills up after as many entries
// as a base of size holds (at least minOverlay/2): a merge's copy of the
// base is paid once per that many adds.
func newOverlay(size int) *overlay {
	return &overlay{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[Entry], pow2(max(minOverlay, 2*size)))}
}

func (o *overlay) full() bool     { return 2*int(o.n.Load())+2 > len(o.slots) }
func (o *overlay) halfFull() bool { return 4*int(o.n.Load()) >= len(o.slots) }

// find returns the slot of the entry naming subject (and, for a
// membership, org) and the entry, or the empty slot where it would go and
// nil.
func (o *overlay) find(member bool, subject, org string) (int, *Entry) {
	h := maphash.String(o.seed, subject)
	if member {
		h ^= maphash.String(o.seed, org) * 0x9e3779b97f4a7c15
	}
	mask := len(o.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		e := o.slots[i].Load()
		if e == nil {
			return i, nil
		}
		if e.Subject == subject && e.timed() == member && (!member || e.OrgID == org) {
			return i, e
		}
	}
}

// put adds e, or for a membership already held replaces it when e is
// later. Under List.mu, and not when full.
func (o *overlay) put(e Entry) {
	member := e.timed()
	i, old := o.find(member, e.Subject, e.OrgID)
	switch {
	case old == nil:
		o.slots[i].Store(&e)
		o.n.Add(1)
	case member && e.At.After(old.At):
		o.slots[i].Store(&e)
	}
}
