package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

const usersUsage = `usage: gatehouse users list [-limit N] [-after ID] | users show|disable|enable|delete EMAIL | users create EMAIL [--name N] [--verified] | sessions revoke --user EMAIL`

// usersCommand is "gatehouse users list|show|create|disable|enable|delete": the
// accounts of the configured database, for operators; changes are
// audited with the actor "system". Never a password hash.
func usersCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usersUsage)
		return 2
	}
	fs := flag.NewFlagSet("gatehouse users", flag.ContinueOnError)
	limit := fs.Int("limit", 100, "at most this many accounts")
	after := fs.String("after", "", "the accounts created after this id")
	name := fs.String("name", "", "users create: the account's name")
	verified := fs.Bool("verified", false, "users create: the address is known to be the person's")
	var email string
	rest := args[1:]
	byEmail := slices.Contains([]string{"show", "create", "disable", "enable", "delete"}, args[0])
	if byEmail && len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		email, rest = rest[0], rest[1:]
	}
	cfg, err := loadConfigFlags(rest, getenv, fs)
	switch {
	case err != nil:
	case byEmail && email == "":
		err = fmt.Errorf("users %s needs an EMAIL", args[0])
	case !byEmail && args[0] != "list":
		err = fmt.Errorf("unknown users command %q (%s)", args[0], usersUsage)
	case *limit < 1 || *limit > 10000:
		err = fmt.Errorf("-limit: want 1 to 10000, got %d", *limit)
	}
	db, code := commandDB(ctx, cfg, err, stderr)
	if db == nil {
		return code
	}
	defer db.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	if args[0] == "list" {
		users, err := db.Identity().ListUsers(ctx, *after, *limit)
		if err != nil {
			fmt.Fprintf(stderr, "gatehouse: %s\n", oneLine(err))
			return 1
		}
		fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tVERIFIED\tCREATED")
		for _, u := range users {
			printUser(tw, &u)
		}
		return 0
	}
	svc := adminService(db, stderr)
	var u *gatehouse.User
	switch args[0] {
	case "create":
		u, err = svc.CreateAccount(ctx, email, *name, *verified)
	case "delete":
		if u, err = svc.DeleteAccountAsOperator(ctx, email); err == nil {
			fmt.Fprintf(stdout, "deleted %s (%s)\n", u.ID, u.Email)
			return 0
		}
	case "disable", "enable":
		change := svc.DisableAccount
		if args[0] == "enable" {
			change = svc.EnableAccount
		}
		if u, err = change(ctx, email); err == nil {
			fmt.Fprintf(stdout, "%sd %s (%s)\n", args[0], u.ID, u.Email)
			return 0
		}
	default:
		u, err = svc.Account(ctx, email)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: %s\n", safeMessage(err))
		return 1
	}
	fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tVERIFIED\tCREATED")
	printUser(tw, u)
	return 0
}

// sessionsCommand is "gatehouse sessions revoke --user EMAIL": every live
// session of that account ends, audited with the actor "system".
func sessionsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "revoke" {
		fmt.Fprintln(stderr, usersUsage)
		return 2
	}
	fs := flag.NewFlagSet("gatehouse sessions revoke", flag.ContinueOnError)
	email := fs.String("user", "", "the account's email address")
	cfg, err := loadConfigFlags(args[1:], getenv, fs)
	if err == nil && *email == "" {
		err = fmt.Errorf("sessions revoke needs --user EMAIL")
	}
	db, code := commandDB(ctx, cfg, err, stderr)
	if db == nil {
		return code
	}
	defer db.Close()
	u, err := adminService(db, stderr).RevokeSessions(ctx, *email)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: %s\n", safeMessage(err))
		return 1
	}
	fmt.Fprintf(stdout, "revoked every session of %s (%s)\n", u.ID, u.Email)
	return 0
}

// adminService is the identity service of an operator's command: the
// stores and audit, nothing that signs or mails.
func adminService(db *sqlstore.DB, stderr io.Writer) *identity.Service {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	ws := workspace.New(workspace.Config{Store: db.Workspace(), Logger: log})
	return identity.New(identity.Config{Store: db.Identity(), Workspace: ws, Logger: log, NoLockout: true})
}

func printUser(w io.Writer, u *gatehouse.User) {
	fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%s\n", u.ID, u.Email, u.Name, u.EmailVerified, u.CreatedAt.UTC().Format(time.RFC3339))
}

// safeMessage is err's message for a client, its cause left out.
func safeMessage(err error) string {
	if e, ok := err.(*gatehouse.Error); ok && e.Kind != gatehouse.KindInternal {
		return e.Message
	}
	return oneLine(err)
}
