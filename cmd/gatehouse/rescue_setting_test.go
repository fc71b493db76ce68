package main

import (
	"strings"
	"testing"
	"time"
)

// TestJobRescueSetting checks GATEHOUSE_JOB_RESCUE_AFTER: 2 minutes by
// default, a Go duration of at least twice the longest job timeout;
// anything shorter could run a job still at work twice, so start-up
// refuses it, naming the setting.
func TestJobRescueSetting(t *testing.T) {
	for raw, want := range map[string]time.Duration{"": 2 * time.Minute, "1m": time.Minute, "10m": 10 * time.Minute} {
		cfg, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_JOB_RESCUE_AFTER": raw}))
		if err != nil || cfg.JobRescueAfter != want {
			t.Errorf("%q: %v, err %v; want %v", raw, cfg.JobRescueAfter, err, want)
		}
	}
	for _, bad := range []string{"59s", "30s", "0", "-2m", "2", "two minutes", "1d"} {
		_, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_JOB_RESCUE_AFTER": bad}))
		if err == nil || !strings.Contains(err.Error(), "GATEHOUSE_JOB_RESCUE_AFTER") {
			t.Errorf("%q: err %v; want one naming the setting", bad, err)
		}
	}
}
