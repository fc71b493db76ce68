package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/keys"
)

// keysCommand is `gatehouse keys rotate [-alg A] [--hs256] [-now]`: it
// opens the database as migrate does (applying pending migrations) and adds
// a new signing key for each ring algorithm, or for -alg's, or with --hs256
// only a new HS256 key of the access tokens. Every instance publishes
// (HS256: verifies) it within keys.Reload and signs with it keys.Ahead
// after the command, all at the same instant (-now: at once, for a leaked
// key, when a token another instance signs may fail to verify elsewhere
// until that instance's reload); the key it replaces stays in the JWK Set
// (HS256: verifies) for keys.Keep after that. It prints the new kids,
// never a key.
func keysCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintf(stderr, "gatehouse: usage: gatehouse keys rotate [-alg RS256|ES256] [--hs256] [-now]\n")
		return 2
	}
	fs := flag.NewFlagSet("gatehouse keys rotate", flag.ContinueOnError)
	alg := fs.String("alg", "", "only this algorithm (RS256 or ES256); default: both")
	hs := fs.Bool("hs256", false, "only a new HS256 key of the access tokens (GATEHOUSE_JWT_SECRET then stops signing)")
	now := fs.Bool("now", false, "sign with the new key at once instead of after "+keys.Ahead.String()+" (a leaked key)")
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
	ahead := keys.Ahead
	if *now {
		ahead = 0
	}
	for _, a := range algs {
		kid, err := ring.Rotate(ctx, a, ahead)
		if err != nil {
			fmt.Fprintf(stderr, "gatehouse: %s\n", oneLine(err))
			return 1
		}
		fmt.Fprintf(stdout, "%s\t%s\n", a, kid)
	}
	if ahead > 0 {
		fmt.Fprintf(stderr, "gatehouse: the new keys are published now and sign from %s\n", time.Now().Add(ahead).UTC().Format(time.RFC3339))
	}
	return 0
}
