package testenv

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// List returns the array at key of r's body as objects, failing when it is
// not one (a JSON null fails too).
func (r *Resp) List(t testing.TB, key string) []map[string]any {
	t.Helper()
	arr, ok := r.JSON()[key].([]any)
	if !ok {
		t.Fatalf("%s = %#v in %s; want an array", key, r.JSON()[key], r.Body)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s[%d] = %#v; want an object", key, i, v)
		}
		out[i] = m
	}
	return out
}

// Obj returns the object at a dotted path of r's body, failing when it is
// not one.
func (r *Resp) Obj(t testing.TB, path string) map[string]any {
	t.Helper()
	m, ok := r.Get(path).(map[string]any)
	if !ok {
		t.Fatalf("%s = %#v in %s; want an object", path, r.Get(path), r.Body)
	}
	return m
}

// Strings converts a decoded JSON array of strings (nil when v is not an
// array).
func Strings(v any) []string {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// CheckKeys fails unless the object m has exactly the keys want.
func CheckKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s has fields %v; want exactly %v", what, got, want)
	}
}

// Time parses the RFC 3339 timestamp v of an answer's field.
func Time(t testing.TB, field string, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s = %#v; want an RFC 3339 string", field, v)
	}
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("%s = %q: %v", field, s, err)
	}
	return tm
}

// Near fails unless got is within 2 s of want.
func Near(t testing.TB, field string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("%s = %s; want %s (±2s)", field, got.Format(time.RFC3339), want.Format(time.RFC3339))
	}
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsUUID reports whether s is a lower-case UUID, as the API writes ids.
func IsUUID(s string) bool { return uuidPattern.MatchString(s) }
