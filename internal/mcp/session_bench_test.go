package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
)

// BenchmarkSessionServer is the cost of a session's own server with every
// tool, paid once per initialize (a tools/call of the session then uses
// it as the one shared server was used).
func BenchmarkSessionServer(b *testing.B) {
	s := New(Config{URL: "http://gatehouse.test/mcp", Tasks: tasks.New(nil, time.Now), Links: links.New(nil, "", time.Now),
		Forms: forms.New(forms.Config{}), Sign: sign.New(nil, "", time.Now, nil),
		EnabledTools: func(context.Context, string) ([]string, error) {
			return []string{"tasks", "links", "forms", "sign"}, nil
		}})
	p := &gatehouse.Principal{UserID: "u", OrgID: "o", Tools: []string{"tasks", "links", "forms", "sign"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.newSessionServer(ctx, p)
	}
}

// TestInputSchemasKept: each tool's input schema, held as a
// *jsonschema.Schema for cheap sessions, is the JSON its map wrote.
func TestInputSchemasKept(t *testing.T) {
	s := New(Config{URL: "http://gatehouse.test/mcp", Tasks: tasks.New(nil, time.Now), Links: links.New(nil, "", time.Now),
		Forms: forms.New(forms.Config{}), Sign: sign.New(nil, "", time.Now, nil)})
	if len(s.order) != 19 {
		t.Fatalf("%d tools; want 19", len(s.order))
	}
	for _, tl := range s.order {
		if _, ok := s.sdkTools[tl.name].InputSchema.(*jsonschema.Schema); !ok {
			t.Errorf("%s: input schema %T; want *jsonschema.Schema", tl.name, s.sdkTools[tl.name].InputSchema)
		}
		if got, want := asJSON(t, s.sdkTools[tl.name].InputSchema), asJSON(t, tl.in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: input schema\n%v\nwant\n%v", tl.name, got, want)
		}
	}
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
