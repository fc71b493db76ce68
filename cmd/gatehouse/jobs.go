package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
)

// jobsCommand is `gatehouse jobs`: it opens the database as migrate does
// and prints the jobs the flags choose, then a count per kind and state.
// It never prints a job's args (mail bodies, webhook payloads).
func jobsCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gatehouse jobs", flag.ContinueOnError)
	var f sqlstore.JobFilter
	fs.StringVar(&f.State, "state", "", "only jobs in this state")
	fs.StringVar(&f.Kind, "kind", "", "only jobs of this kind")
	fs.IntVar(&f.Limit, "limit", 100, "at most this many jobs, newest first")
	cfg, err := loadConfigFlags(args, getenv, fs)
	if err == nil && f.State != "" && !slices.Contains(sqlstore.JobStates, f.State) {
		err = fmt.Errorf("-state %q: want one of %v", f.State, sqlstore.JobStates)
	}
	if err == nil && (f.Limit < 1 || f.Limit > 10000) {
		err = fmt.Errorf("-limit %d: want 1 to 10000", f.Limit)
	}
	db, code := commandDB(ctx, cfg, err, stderr)
	if db == nil {
		return code
	}
	defer db.Close()
	if err := printJobs(ctx, db, f, stdout); err != nil {
		fmt.Fprintf(stderr, "gatehouse: %s\n", oneLine(err))
		return 1
	}
	return 0
}

// printJobs writes the table of jobs and the summary.
func printJobs(ctx context.Context, db *sqlstore.DB, f sqlstore.JobFilter, w io.Writer) error {
	jobs, err := db.ListJobs(ctx, f)
	if err != nil {
		return err
	}
	counts, err := db.CountJobs(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tATTEMPT\tSCHEDULED\tATTEMPTED\tLAST ERROR")
	for _, j := range jobs {
		attempted := "-"
		if j.AttemptedAt != nil {
			attempted = stamp(*j.AttemptedAt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts,
			stamp(j.ScheduledAt), attempted, j.LastError)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "KIND\tSTATE\tJOBS")
	for _, c := range counts {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", c.Kind, c.State, c.N)
	}
	return tw.Flush()
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// commandDB ends a one-shot command's set-up (jobs, keys): a configuration
// error (cfgErr) exits 2, a database that does not open exits 1, each with
// one line on stderr; otherwise it returns the open database, which the
// caller closes.
func commandDB(ctx context.Context, cfg *Config, cfgErr error, stderr io.Writer) (*sqlstore.DB, int) {
	if cfgErr != nil {
		fmt.Fprintf(stderr, "gatehouse: configuration: %s\n", oneLine(cfgErr))
		return nil, 2
	}
	db, err := sqlstore.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse: open database: %s\n", oneLine(err))
		return nil, 1
	}
	return db, 0
}
