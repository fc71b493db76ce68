package app_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestReadyWhenServing: a started service, migrated with its job workers
// running and no hash queue, answers GET /ready with 200 (the answer
// checked against the API document).
func TestReadyWhenServing(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		if r := env.Do(t, "GET", "/ready", "", nil).Want(t, 200); r.Str("status") != "ready" {
			t.Errorf("GET /ready: %s", r.Body)
		}
	})
}
