package pages

import (
	"slices"
	"testing"
)

// TestCSVCells: a cell a spreadsheet would read as a formula (= + - @, a
// tab or a carriage return first) is made text; the rest are unchanged.
func TestCSVCells(t *testing.T) {
	got := csvCells("=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1", "plain", "", "a=b")
	want := []string{"'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\t=1", "'\r=1", "plain", "", "a=b"}
	if !slices.Equal(got, want) {
		t.Fatalf("csvCells = %q; want %q", got, want)
	}
}
