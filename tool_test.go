package gatehouse

import "testing"

// A tool is on unless switched off.
func TestToolOn(t *testing.T) {
	off, on := false, true
	for _, tc := range []struct {
		name     string
		switched *bool
		want     bool
	}{
		{"never set", nil, true},
		{"switched on", &on, true},
		{"switched off", &off, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToolOn(tc.switched); got != tc.want {
				t.Errorf("ToolOn = %v; want %v", got, tc.want)
			}
		})
	}
}
