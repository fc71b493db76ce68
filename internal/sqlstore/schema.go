package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// SchemaVersion is the newest schema version this binary knows: the
// number of its last migration.
func SchemaVersion() int64 {
	var v int64
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	for _, n := range names {
		num, _, _ := strings.Cut(path.Base(n), "_")
		if k, err := strconv.ParseInt(num, 10, 64); err == nil && k > v {
			v = k
		}
	}
	return max(v, riverMigrationBase+riverVersions)
}

// ErrSchemaNewer is returned by Open for a database whose schema a newer
// release has migrated: this binary does not know its last migrations.
type ErrSchemaNewer struct{ Database, Known int64 }

func (e *ErrSchemaNewer) Error() string {
	return fmt.Sprintf("the database's schema version %d is newer than this binary knows (%d): run the release that migrated it, or a later one", e.Database, e.Known)
}

// Schema reports the database's schema version (its last applied
// migration) and whether migrations of this binary are still pending.
func (db *DB) Schema(ctx context.Context) (version int64, pending bool, err error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, false, err
	}
	p, err := db.dialect.migrations(db.writer, sub)
	if err != nil {
		return 0, false, err
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("schema version: %w", err)
	}
	if current > target {
		return current, false, &ErrSchemaNewer{Database: current, Known: target}
	}
	pending, err = p.HasPending(ctx)
	if err != nil {
		return current, false, fmt.Errorf("schema version: %w", err)
	}
	return current, pending, nil
}
