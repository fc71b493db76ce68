package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/keys"
)

// keysCommand is `gatehouse keys rotate [-alg A] [--hs256]`: it opens the
// database as migrate does (applying pending migrations) and adds a new
// signing key for each ring algorithm, or for -alg's, or with --hs256 only
// a new HS256 key of the access tokens; every instance signs with it within
// keys.Reload (and verifies it at once: an unknown kid reloads the ring),
// and the key it replaces stays in the JWK Set (HS256: verifies) for
// keys.Keep. It prints the new kids, never a key.
func keysCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintf(stderr, "gatehouse: usage: gatehouse keys rotate [-alg RS256|ES256] [--hs256]\n")
		return 2
	}
	fs := flag.NewFlagSet("gatehouse keys rotate", flag.ContinueOnError)
	alg := fs.String("alg", "", "only this algorithm (RS256 or ES256); default: both")
	hs := fs.Bool("hs256", false, "only a new HS256 key of the access tokens (GATEHOUSE_JWT_SECRET then stops signing)")
	cfg, err := loadConfigFlags(args[1:], getenv, fs)
	switch {
	case err != nil:
	case *alg != "" && *hs:
		err = fmt.Errorf("-alg and --hs256 together: rotate one or the other")
	case *alg != "" && !slices.Contains(keys.Algs, *alg):
		err = fmt.Errorf("-alg %q: want one of %v", *alg, keys.Algs)
	}
	db, code := commandDB(ctx, cfg, err, stderr)
	if db == nil {
		return code
	}
	defer db.Close()
	ring, err := app.OpenKeys(ctx, cfg.app(), db, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: %s\n", oneLine(err))
		return 1
	}
	algs := keys.Algs
	switch {
	case *alg != "":
		algs = []string{*alg}
	case *hs:
		algs = []string{keys.HS256}
		fmt.Fprintf(stderr, "gatehouse: access tokens are now signed with a key only Gatehouse holds; services that verified them with GATEHOUSE_JWT_SECRET must use GET /v1/auth/verify or /oauth/introspect (README, Signing keys)\n")
	}
	for _, a := range algs {
		kid, err := ring.Rotate(ctx, a)
		if err != nil {
			fmt.Fprintf(stderr, "gatehouse: %s\n", oneLine(err))
			return 1
		}
		fmt.Fprintf(stdout, "%s\t%s\n", a, kid)
	}
	return 0
}
