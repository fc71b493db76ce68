package sqlstore_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/storetest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestConformance runs the storage conformance suite on each database: a
// fresh SQLite file per rule, and the test binary's PostgreSQL database.
func TestConformance(t *testing.T) {
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Stores {
				// A queue of its own: the PostgreSQL database is shared.
				d := testenv.OpenDB(t, db).OnQueue("conformance_" + testenv.RandomHex(6))
				return storetest.Stores{Identity: d.Identity(), OAuth: d.OAuth(), Forms: d.Forms(), Links: d.Links(), PendingJobs: d.PendingJobs,
					RefreshAll: d.Identity().RefreshAll} // the refresh batch's statement or transaction
			})
		})
	}
}
