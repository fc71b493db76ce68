package i18n

import (
	"context"
	"testing"
)

// BenchmarkRefusal: a formatted message found by its format (the worst
// case: it tries the formats in order), as a German page shows it.
func BenchmarkRefusal(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Refusal(German, "new password must be at least 8 characters"); !ok {
			b.Fatal("not found")
		}
	}
}

// BenchmarkWithRequest: what the kernel adds to an API request that sends
// Accept-Language.
func BenchmarkWithRequest(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		_ = WithRequest(ctx, "de-DE,de;q=0.9,en;q=0.5")
	}
}
