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

// keysCommand is `gatehouse keys rotate [-alg A]`: it opens the database
// as migrate does (applying pending migrations) and adds a new signing key
// for each algorithm, or for -alg's; every instance signs with it within
// keys.Reload, and the key it replaces stays in the JWK Set for
// keys.Keep. It prints the new kids, never a private key.
func keysCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintf(stderr, "gatehouse: usage: gatehouse keys rotate [-alg RS256|ES256]\n")
		return 2
	}
	fs := flag.NewFlagSet("gatehouse keys rotate", flag.ContinueOnError)
	alg := fs.String("alg", "", "only this algorithm (RS256 or ES256); default: both")
	cfg, err := loadConfigFlags(args[1:], getenv, fs)
	if err == nil && *alg != "" && !slices.Contains(keys.Algs, *alg) {
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
	if *alg != "" {
		algs = []string{*alg}
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
