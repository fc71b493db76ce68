package main

import "runtime/debug"

// gcPercent is the garbage collector's target when GOGC is not set: the
// heap may grow to five times what is live before a collection. The live
// heap of a busy instance is small (10–30 MiB under a refresh load), so
// Go's default (100) collected it a dozen times a second. On two cores 400
// served 2–18% more refreshes and 9–17% more verifies and key exchanges
// (paired runs, docs/decisions.md). The price is memory while passwords
// are hashed (19 MiB each): a login flood peaked at 309 MiB resident
// instead of 176 MiB.
const gcPercent = 400

// tuneGC sets gcPercent unless the operator chose with GOGC (or asked for
// a memory-limited heap with GOMEMLIMIT), and reports whether it did.
func tuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetGCPercent(gcPercent)
	return true
}
