package main

import (
	"testing"
	"time"
)

// TestSignRetentionSetting checks GATEHOUSE_SIGN_RETENTION: 365 days by
// default, whole days ("30d") or a Go duration of at least an hour
// otherwise.
func TestSignRetentionSetting(t *testing.T) {
	day := 24 * time.Hour
	for raw, want := range map[string]time.Duration{"": 365 * day, "30d": 30 * day, "720h": 720 * time.Hour, "1h": time.Hour} {
		c, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_SIGN_RETENTION": raw}))
		if err != nil || c.SignRetention != want {
			t.Errorf("GATEHOUSE_SIGN_RETENTION=%q: %v, err %v; want %v", raw, c.SignRetention, err, want)
		}
	}
	for _, raw := range []string{"0", "59m", "-1d", "1.5d", "d", "forever", "99999d"} {
		if _, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_SIGN_RETENTION": raw})); err == nil {
			t.Errorf("GATEHOUSE_SIGN_RETENTION=%q accepted; want an error", raw)
		}
	}
}
