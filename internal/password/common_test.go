package password

import "testing"

func TestIsCommon(t *testing.T) {
	if n := CommonCount(); n < 10000 {
		t.Fatalf("CommonCount() = %d; want at least 10,000", n)
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{
		{"password", true},
		{"PassWord", true},
		{"12345678", true},
		{"qwertyuiop", true},
		{"Trustno1", true},
		{"correct horse battery staple", false},
		{"password-3fa9c1", false},
		{"", false},
	} {
		if got := IsCommon(tc.pw); got != tc.want {
			t.Errorf("IsCommon(%q) = %v; want %v", tc.pw, got, tc.want)
		}
	}
}
