package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/gatehouse/gatehouse/internal/mail"
)

// The job engine (River, see internal/jobs) keeps its queue in our database.
// This file is what the stores need of it: River's schema as goose
// migrations, and the transactional insert that puts a job in the same
// transaction as the change that causes it.

// riverMigrationBase numbers River's migrations among ours: River schema
// version k is goose version riverMigrationBase+k. River v0.51.1 has 8; a
// River upgrade that adds version 9 adds goose version 119 here.
const (
	riverMigrationBase = 110
	riverVersions      = 8
)

// riverMigrations returns one goose Go migration per River schema version,
// each in goose's own transaction: on PostgreSQL River's version 4 adds an
// enum value that version 6 uses, which one transaction cannot do.
func (d dialect) riverMigrations() []*goose.Migration {
	var ms []*goose.Migration
	for k := 1; k <= riverVersions; k++ {
		up := func(ctx context.Context, tx *sql.Tx) error {
			return d.migrateRiver(ctx, tx, rivermigrate.DirectionUp, k)
		}
		down := func(ctx context.Context, tx *sql.Tx) error {
			target := k - 1
			if target == 0 {
				target = -1 // rivermigrate's "no version"
			}
			return d.migrateRiver(ctx, tx, rivermigrate.DirectionDown, target)
		}
		ms = append(ms, goose.NewGoMigration(int64(riverMigrationBase+k), &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down}))
	}
	return ms
}

// migrateRiver moves River's schema to version target inside tx (-1: none
// of it).
func (d dialect) migrateRiver(ctx context.Context, tx *sql.Tx, dir rivermigrate.Direction, target int) error {
	m, err := rivermigrate.New(d.riverDriver(nil), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := m.MigrateTx(ctx, tx, dir, &rivermigrate.MigrateOpts{TargetVersion: target}); err != nil {
		return fmt.Errorf("river migration %d: %w", target, err)
	}
	return nil
}

// riverDriver is River's driver on a database/sql pool of this dialect
// (nil is enough for migrations).
func (d dialect) riverDriver(db *sql.DB) riverdriver.Driver[*sql.Tx] {
	if d.name == "sqlite" {
		return riversqlite.New(db)
	}
	return riverdatabasesql.New(db)
}

// newInserter returns the insert-only River client on the writer pool: it
// inserts jobs through our transactions and never works them.
func (db *DB) newInserter() error {
	c, err := river.NewClient(db.dialect.riverDriver(db.writer), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("job inserter: %w", err)
	}
	db.jobs = c
	return nil
}

// Queue is the job queue this view of the database inserts into: "default"
// unless OnQueue chose another. Mail goes to its own queue beside it
// (MailQueue).
func (db *DB) Queue() string { return db.queue }

// MailQueue is the queue of this view's mail jobs: Queue with "_mail"
// appended, so that mail has workers of its own that no volume of
// webhook deliveries can hold (docs/decisions.md), and every instance on
// one Queue shares it too.
func (db *DB) MailQueue() string { return MailQueue(db.queue) }

// MailQueue is the mail queue beside queue.
func MailQueue(queue string) string { return queue + "_mail" }

// queueOf is the queue of a job of kind.
func (db *DB) queueOf(kind string) string {
	if kind == mail.JobKind {
		return db.MailQueue()
	}
	return db.queue
}

// OnQueue returns a view of db whose stores insert their jobs into queue
// (tests that share one PostgreSQL database give each service its own). The
// view shares db's pools; close db, not the view.
func (db *DB) OnQueue(queue string) *DB {
	v := *db
	v.queue = queue
	return &v
}

// URL is the database URL db was opened with, for the job engine's own pool.
func (db *DB) URL() string { return db.url }

// insertJobs inserts jobs into the queue in c's transaction (or in a new
// one): they become visible, and workable, when it commits. Inside a
// transaction only the Tx variants may be used: on SQLite the transaction
// holds the only writer connection.
func (c conn) insertJobs(ctx context.Context, jobs []river.InsertManyParams) error {
	if len(jobs) == 0 {
		return nil
	}
	for i := range jobs {
		if jobs[i].InsertOpts == nil {
			jobs[i].InsertOpts = &river.InsertOpts{}
		}
		jobs[i].InsertOpts.Queue = c.db.queueOf(jobs[i].Args.Kind())
	}
	return c.inTx(ctx, func(c conn) error {
		if _, err := c.db.jobs.InsertManyTx(c.ctx(ctx), c.tx, jobs); err != nil {
			return fmt.Errorf("insert jobs: %w", err)
		}
		return nil
	})
}

// pendingJobs counts the jobs of kind in the queue not yet finished:
// waiting, running or waiting for a retry.
func (c conn) pendingJobs(ctx context.Context, kind string) (int, error) {
	var n int
	err := c.r().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = $1 AND queue = $2
		AND state IN ('available', 'running', 'retryable', 'scheduled', 'pending')`, kind, c.db.queueOf(kind)).Scan(&n)
	return n, err
}
