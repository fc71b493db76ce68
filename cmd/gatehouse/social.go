package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/gatehouse/gatehouse/internal/sso"
)

// socialFile is the shape of GATEHOUSE_SOCIAL_FILE.
type socialFile struct {
	Providers []struct {
		Name         string   `json:"name"`
		Label        string   `json:"label"`
		Issuer       string   `json:"issuer"`
		ClientID     string   `json:"client_id"`
		ClientSecret string   `json:"client_secret"`
		Scopes       []string `json:"scopes"`
	} `json:"providers"`
}

// loadSocial reads the social sign-in providers: those of the JSON file
// GATEHOUSE_SOCIAL_FILE, then each name of GATEHOUSE_SOCIAL_PROVIDERS
// from GATEHOUSE_SOCIAL_<NAME>_{ISSUER,CLIENT_ID,CLIENT_SECRET,SCOPES,LABEL}
// (the secret also from _CLIENT_SECRET_FILE). Every problem is returned;
// an error never quotes a secret.
func loadSocial(getenv func(string) string) ([]sso.SocialProvider, []error) {
	var out []sso.SocialProvider
	var errs []error
	if path := getenv("GATEHOUSE_SOCIAL_FILE"); path != "" {
		var f socialFile
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &f)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("GATEHOUSE_SOCIAL_FILE: cannot read %q as JSON {\"providers\": [...]}", path))
		}
		for _, p := range f.Providers {
			out = append(out, sso.SocialProvider{Name: p.Name, Label: p.Label, Issuer: p.Issuer, ClientID: p.ClientID, ClientSecret: p.ClientSecret, Scopes: p.Scopes})
		}
	}
	for _, name := range strings.Split(getenv("GATEHOUSE_SOCIAL_PROVIDERS"), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		pre := "GATEHOUSE_SOCIAL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_"
		p := sso.SocialProvider{Name: name, Label: getenv(pre + "LABEL"), Issuer: getenv(pre + "ISSUER"), ClientID: getenv(pre + "CLIENT_ID"),
			ClientSecret: getenv(pre + "CLIENT_SECRET"), Scopes: strings.Fields(getenv(pre + "SCOPES"))}
		if file := getenv(pre + "CLIENT_SECRET_FILE"); file != "" {
			if p.ClientSecret != "" {
				errs = append(errs, fmt.Errorf("%sCLIENT_SECRET_FILE: set both it and %sCLIENT_SECRET; keep one", pre, pre))
			} else if b, err := os.ReadFile(file); err != nil {
				errs = append(errs, fmt.Errorf("%sCLIENT_SECRET_FILE: cannot read %q", pre, file))
			} else {
				p.ClientSecret = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
			}
		}
		out = append(out, p)
	}
	seen := map[string]bool{}
	for i := range out {
		if err := out[i].Check(); err != nil {
			errs = append(errs, fmt.Errorf("GATEHOUSE_SOCIAL_PROVIDERS: %v", err))
		}
		if seen[out[i].Name] {
			errs = append(errs, fmt.Errorf("GATEHOUSE_SOCIAL_PROVIDERS: provider %q is configured twice", out[i].Name))
		}
		seen[out[i].Name] = true
	}
	return out, errs
}
