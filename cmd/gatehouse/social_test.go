package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSocialSettings checks the social providers read from
// GATEHOUSE_SOCIAL_PROVIDERS and its per-provider variables and from
// GATEHOUSE_SOCIAL_FILE, and that a bad one stops start-up naming the
// setting without quoting its secret.
func TestSocialSettings(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "gitlab-secret")
	os.WriteFile(secretFile, []byte("gl-secret\n"), 0o600)
	jsonFile := filepath.Join(dir, "social.json")
	os.WriteFile(jsonFile, []byte(`{"providers": [{"name": "microsoft", "label": "Microsoft", "issuer": "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0", "client_id": "ms-id", "client_secret": "ms-secret"}]}`), 0o600)
	cfg, err := loadConfig(nil, testGetenv(map[string]string{
		"GATEHOUSE_SOCIAL_FILE":                      jsonFile,
		"GATEHOUSE_SOCIAL_PROVIDERS":                 "google, gitlab",
		"GATEHOUSE_SOCIAL_GOOGLE_ISSUER":             "https://accounts.google.com",
		"GATEHOUSE_SOCIAL_GOOGLE_CLIENT_ID":          "g-id",
		"GATEHOUSE_SOCIAL_GOOGLE_CLIENT_SECRET":      "g-secret",
		"GATEHOUSE_SOCIAL_GOOGLE_LABEL":              "Google",
		"GATEHOUSE_SOCIAL_GITLAB_ISSUER":             "https://gitlab.com",
		"GATEHOUSE_SOCIAL_GITLAB_CLIENT_ID":          "gl-id",
		"GATEHOUSE_SOCIAL_GITLAB_CLIENT_SECRET_FILE": secretFile,
		"GATEHOUSE_SOCIAL_GITLAB_SCOPES":             "openid email",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range cfg.Social {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"microsoft", "google", "gitlab"}) || cfg.Social[1].Label != "Google" || cfg.Social[2].ClientSecret != "gl-secret" ||
		!slices.Equal(cfg.Social[2].Scopes, []string{"openid", "email"}) || len(cfg.app().Social) != 3 {
		t.Errorf("social = %+v; want microsoft, google (labelled), gitlab (secret from its file, two scopes)", cfg.Social)
	}
	for name, env := range map[string]map[string]string{
		"plain http issuer": {"GATEHOUSE_SOCIAL_PROVIDERS": "x", "GATEHOUSE_SOCIAL_X_ISSUER": "http://idp.example", "GATEHOUSE_SOCIAL_X_CLIENT_ID": "id",
			"GATEHOUSE_SOCIAL_X_CLIENT_SECRET": "very-secret"},
		"no secret": {"GATEHOUSE_SOCIAL_PROVIDERS": "x", "GATEHOUSE_SOCIAL_X_ISSUER": "https://idp.example", "GATEHOUSE_SOCIAL_X_CLIENT_ID": "id"},
		"bad name": {"GATEHOUSE_SOCIAL_PROVIDERS": "X Y", "GATEHOUSE_SOCIAL_X Y_ISSUER": "https://idp.example", "GATEHOUSE_SOCIAL_X Y_CLIENT_ID": "id",
			"GATEHOUSE_SOCIAL_X Y_CLIENT_SECRET": "very-secret"},
		"twice": {"GATEHOUSE_SOCIAL_PROVIDERS": "x,x", "GATEHOUSE_SOCIAL_X_ISSUER": "https://idp.example", "GATEHOUSE_SOCIAL_X_CLIENT_ID": "id",
			"GATEHOUSE_SOCIAL_X_CLIENT_SECRET": "very-secret"},
		"unreadable file": {"GATEHOUSE_SOCIAL_FILE": filepath.Join(dir, "missing.json")},
	} {
		_, err := loadConfig(nil, testGetenv(env))
		if err == nil || !strings.Contains(err.Error(), "GATEHOUSE_SOCIAL_") || strings.Contains(err.Error(), "very-secret") {
			t.Errorf("%s: err %v; want one naming the setting, never the secret", name, err)
		}
	}
}
