package pages

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse"
)

// TestFormErrorByField: formError places an error by its Field, not by
// how its message begins, so a reworded message stays next to its field
// and a message that merely opens with a field's name does not move there.
func TestFormErrorByField(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		fields    []string
		wantField string
		wantMsg   string
		wantOK    bool
	}{
		{"field, message not naming it", fmt.Errorf("wrap: %w", gatehouse.InvalidField("password", "choose something harder to guess")),
			[]string{"email", "password"}, "password", "Choose something harder to guess.", true},
		{"API name relabelled", gatehouse.InvalidField("new_password", "new_password is too common"),
			[]string{"new_password", "current_password"}, "new_password", "New password is too common.", true},
		{"field without a label", gatehouse.InvalidField("members", "members is required"),
			[]string{"members", "role"}, "members", "Members is required.", true},
		{"empty invitation form", gatehouse.InvalidField("emails", "emails is required for email invitations"),
			[]string{"emails", "role"}, "emails", "At least one email address is required for email invitations.", true},
		{"forbidden with a field", gatehouse.Errorf(gatehouse.KindForbidden, "current password is wrong").WithField("current_password"),
			[]string{"new_password", "current_password"}, "current_password", "Current password is wrong.", true},
		{"message opens with a field name, no Field", gatehouse.Invalid("name must be short"),
			[]string{"name"}, "", "Name must be short.", true},
		{"field the form lacks", gatehouse.InvalidField("slug", "slug is taken"),
			[]string{"name"}, "", "Slug is taken.", true},
		{"internal", errors.New("boom"), []string{"name"}, "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, msg, ok := formError(c.err, c.fields...)
			if f != c.wantField || msg != c.wantMsg || ok != c.wantOK {
				t.Fatalf("formError = (%q, %q, %v), want (%q, %q, %v)", f, msg, ok, c.wantField, c.wantMsg, c.wantOK)
			}
		})
	}
}
