package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTTPSNeedsSMTPOrMailLog: an https base URL without SMTP is refused
// (sign-in links would land in the log unnoticed) unless GATEHOUSE_MAIL=log
// asks for that; http and a configured SMTP URL are accepted as before.
func TestHTTPSNeedsSMTPOrMailLog(t *testing.T) {
	for _, c := range []struct {
		name   string
		env    map[string]string
		wantOK bool
	}{
		{"https without SMTP", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example"}, false},
		{"https with mail to the log asked for", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example", "GATEHOUSE_MAIL": "log"}, true},
		{"https with SMTP", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example", "GATEHOUSE_SMTP_URL": "smtp://mail.example:587"}, true},
		{"http without SMTP", map[string]string{"GATEHOUSE_BASE_URL": "http://127.0.0.1:8080"}, true},
		{"no base URL without SMTP", nil, true},
		{"unknown mail value", map[string]string{"GATEHOUSE_MAIL": "stdout"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadConfig(nil, testGetenv(c.env))
			if (err == nil) != c.wantOK {
				t.Errorf("loadConfig: %v; want ok %v", err, c.wantOK)
			}
			if err != nil && !strings.Contains(err.Error(), "GATEHOUSE_MAIL") {
				t.Errorf("the error does not name GATEHOUSE_MAIL: %v", err)
			}
		})
	}
}

// TestSecretsFromFiles: each secret setting is read from the file its
// _FILE variable names, without the final line break; setting both is
// refused, as is a file that cannot be read or is empty, and no error
// quotes the secret.
func TestSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jwt := strings.Repeat("j", 40)
	key := strings.Repeat("k", 40)
	c, err := loadConfig(nil, testGetenv(map[string]string{
		"GATEHOUSE_JWT_SECRET_FILE":     write("jwt", jwt+"\n"),
		"GATEHOUSE_ENCRYPTION_KEY_FILE": write("key", key+"\r\n"),
		"GATEHOUSE_SMTP_URL_FILE":       write("smtp", "smtp://u:p@mail.example:587\n"),
		"GATEHOUSE_DATABASE_URL_FILE":   write("db", "sqlite:"+filepath.Join(dir, "g.db")),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.JWTSecret != jwt || c.EncryptionKey != key || c.SMTPURL != "smtp://u:p@mail.example:587" || c.DatabaseURL != "sqlite:"+filepath.Join(dir, "g.db") {
		t.Errorf("settings from files: %q %q %q %q", c.JWTSecret, c.EncryptionKey, c.SMTPURL, c.DatabaseURL)
	}
	for _, bad := range []map[string]string{
		{"GATEHOUSE_JWT_SECRET": jwt, "GATEHOUSE_JWT_SECRET_FILE": write("jwt2", jwt)},
		{"GATEHOUSE_JWT_SECRET_FILE": filepath.Join(dir, "missing")},
		{"GATEHOUSE_JWT_SECRET_FILE": write("empty", "\n")},
		{"GATEHOUSE_JWT_SECRET_FILE": write("short", "tooshort-secret-value")},
	} {
		_, err := loadConfig(nil, testGetenv(bad))
		if err == nil || !strings.Contains(err.Error(), "GATEHOUSE_JWT_SECRET") {
			t.Errorf("loadConfig(%v): %v; want an error naming GATEHOUSE_JWT_SECRET", bad, err)
		} else if strings.Contains(err.Error(), jwt) || strings.Contains(err.Error(), "tooshort-secret-value") {
			t.Errorf("the error quotes the secret: %v", err)
		}
	}
	// A _FILE variable of a setting that is not a secret is not read.
	if c, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_ADDR_FILE": write("addr", "0.0.0.0:1")})); err != nil || c.Addr != "127.0.0.1:8080" {
		t.Errorf("GATEHOUSE_ADDR_FILE was read: %v %q", err, c.Addr)
	}
}

// TestTrustedProxiesSetting: GATEHOUSE_TRUSTED_PROXIES takes CIDRs and
// bare addresses, and refuses anything else.
func TestTrustedProxiesSetting(t *testing.T) {
	c, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7,fd00::/8"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TrustedProxies) != 3 || c.TrustedProxies[1].String() != "192.168.1.7/32" {
		t.Errorf("TrustedProxies = %v", c.TrustedProxies)
	}
	if _, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "10.0.0.0/8,proxy.example"})); err == nil || !strings.Contains(err.Error(), "GATEHOUSE_TRUSTED_PROXIES") {
		t.Errorf("a host name: %v; want an error naming the setting", err)
	}
}

// TestRateLimitSetting: GATEHOUSE_RATE_LIMIT is on (shared on
// PostgreSQL), local (in each instance's memory) or off.
func TestRateLimitSetting(t *testing.T) {
	for _, tc := range []struct {
		raw          string
		limit, local bool
	}{{"on", true, false}, {"local", true, true}, {"off", false, false}} {
		c, err := loadConfig(nil, testGetenv(map[string]string{"GATEHOUSE_RATE_LIMIT": tc.raw}))
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if c.RateLimit != tc.limit || c.LocalLimits != tc.local {
			t.Errorf("%s: RateLimit %v, LocalLimits %v; want %v, %v", tc.raw, c.RateLimit, c.LocalLimits, tc.limit, tc.local)
		}
	}
}
