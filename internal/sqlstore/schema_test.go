package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSchemaVersion: a migrated database is at the binary's schema
// version with nothing pending; rolled back one migration it has one
// pending; one a newer release migrated (a version this binary does not
// know) is refused at Open, in one line, and left as it was.
func TestSchemaVersion(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			ctx := context.Background()
			url := testenv.FreshURL(t, db)
			d := open(t, url)
			v, pending, err := d.Schema(ctx)
			if err != nil || pending || v != sqlstore.SchemaVersion() {
				t.Fatalf("Schema = %d, %v, %v; want %d, no pending", v, pending, err, sqlstore.SchemaVersion())
			}
			if err := d.MigrateDownTo(ctx, v-1); err != nil {
				t.Fatal(err)
			}
			if _, pending, err := d.Schema(ctx); err != nil || !pending {
				t.Errorf("one migration down: pending %v, %v; want pending", pending, err)
			}
			d.Close()
			d = open(t, url) // migrates again
			newer := sqlstore.SchemaVersion() + 20
			exec(t, d, `INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, newer)
			d.Close()
			_, err = sqlstore.Open(ctx, url)
			var e *sqlstore.ErrSchemaNewer
			if !errors.As(err, &e) || e.Database != newer || e.Known != sqlstore.SchemaVersion() || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Open of a newer schema: %v; want ErrSchemaNewer %d > %d in one line", err, newer, sqlstore.SchemaVersion())
			}
		})
	}
}
