package app

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
)

// TestDepsDefaults: what the binary leaves unset is filled once, before
// any module is built, so no module is handed a nil clock, logger, mail
// sender, resolver or hasher; only the database is required.
func TestDepsDefaults(t *testing.T) {
	d, err := Deps{DB: &sqlstore.DB{}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if d.Now == nil || d.Logger == nil || d.Mail == nil || d.Resolver == nil || d.Hasher == nil {
		t.Errorf("withDefaults left a dependency unset: %+v", d)
	}
	if d.Now().IsZero() {
		t.Error("the default clock reads the zero time")
	}
	if _, err := (Deps{}).withDefaults(); err == nil {
		t.Error("withDefaults without a database: no error")
	}
}
