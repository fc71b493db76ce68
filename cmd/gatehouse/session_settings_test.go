package main

import (
	"strings"
	"testing"
	"time"
)

// TestSessionSettings checks GATEHOUSE_SESSION_MAX_AGE (90 days by
// default) and GATEHOUSE_REAUTH_WINDOW (15 minutes): Go durations or whole
// days, above zero; anything else is refused at start, naming the setting.
func TestSessionSettings(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		maxAge, reauth     string
		wantMax, wantReuth time.Duration
	}{
		{"", "", 90 * day, 15 * time.Minute},
		{"30d", "5m", 30 * day, 5 * time.Minute},
		{"720h", "1h", 30 * day, time.Hour},
	} {
		cfg, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_SESSION_MAX_AGE": c.maxAge, "GATEHOUSE_REAUTH_WINDOW": c.reauth}))
		if err != nil || cfg.SessionMaxAge != c.wantMax || cfg.ReauthWindow != c.wantReuth {
			t.Errorf("%q, %q: %v, %v, err %v; want %v, %v", c.maxAge, c.reauth, cfg.SessionMaxAge, cfg.ReauthWindow, err, c.wantMax, c.wantReuth)
		}
	}
	for _, bad := range []string{"0", "-1h", "0d", "ninety", "1.5d", "d"} {
		for _, env := range []string{"GATEHOUSE_SESSION_MAX_AGE", "GATEHOUSE_REAUTH_WINDOW"} {
			_, err := loadConfig(nil, testGetenv(map[string]string{env: bad}))
			if err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("%s=%q: err %v; want one naming the setting", env, bad, err)
			}
		}
	}
}
