package gatehouse

import "testing"

func TestRequireFull(t *testing.T) {
	tests := []struct {
		via, org string
		want     Kind // KindInternal: no error
	}{
		{ViaPassword, "", KindInternal},
		{ViaPassword, "other", KindInternal},
		{ViaAPIKey, "", KindForbidden},
		{ViaAPIKey, "own", KindForbidden},
		{ViaAPIKey, "other", KindNotFound},
		{ViaOAuth, "other", KindNotFound},
	}
	for _, tt := range tests {
		p := &Principal{Via: tt.via, OrgID: "own"}
		err := p.RequireFull(tt.org)
		if got := ErrorKind(err); got != tt.want || (err == nil) != (tt.want == KindInternal) {
			t.Errorf("%s token, org %q: %v (kind %d); want kind %d", tt.via, tt.org, err, got, tt.want)
		}
	}
}
