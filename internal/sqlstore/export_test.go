package sqlstore

import (
	"context"
	"io/fs"
)

// BackfillEmailKeys is backfillEmailKeys, for the tests of migration 00100.
var BackfillEmailKeys = backfillEmailKeys

// MigrateDownTo undoes the migrations after version v, for the tests of a
// migration's data: rows written as the older schema had them are then
// carried forward by Open.
func (db *DB) MigrateDownTo(ctx context.Context, v int64) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := db.dialect.migrations(db.writer, sub)
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}
