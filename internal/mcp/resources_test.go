package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestMCPResources: the caller's issues and links as gatehouse://
// resources, each read as the API's JSON; another workspace's item, an
// unknown one and one beyond the token's scopes are not found.
func TestMCPResources(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		team := env.CreateTeam(t, owner.Token, org, "Platform")
		issue := env.Do(t, "POST", "/tasks/v1/issues", owner.Token, map[string]any{"teamId": team, "title": "Context"}).Want(t, 200).Str("issue.id")
		link := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200).Str("link.id")
		stranger, sorg := env.Team(t)
		steam := env.CreateTeam(t, stranger.Token, sorg, "Theirs")
		theirs := env.Do(t, "POST", "/tasks/v1/issues", stranger.Token, map[string]any{"teamId": steam, "title": "x"}).Want(t, 200).Str("issue.id")
		ctx := context.Background()
		cs := connect(t, env, bound(t, env, owner.Token, "", nil, env.URL+"/mcp"))
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if want := []string{"gatehouse://tasks/issues/" + issue, "gatehouse://links/links/" + link}; !reflect.DeepEqual(uris, want) {
			t.Fatalf("resources = %v; want %v", uris, want)
		}
		read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "gatehouse://tasks/issues/" + issue})
		if err != nil {
			t.Fatal(err)
		}
		var got any
		json.Unmarshal([]byte(read.Contents[0].Text), &got)
		if want := env.Do(t, "GET", "/tasks/v1/issues/"+issue, owner.Token, nil).Want(t, 200).JSON(); !reflect.DeepEqual(got, any(want)) {
			t.Fatalf("read = %v; the API's %v", got, want)
		}
		for _, uri := range []string{"gatehouse://tasks/issues/" + theirs, "gatehouse://tasks/issues/" + missing, "gatehouse://nope/" + issue, "https://example.com/"} {
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatalf("%s: %v; want not found", uri, err)
			}
		}
		// A links-only token sees no issue.
		lo := connect(t, env, bound(t, env, owner.Token, "links:read", nil, env.URL+"/mcp"))
		if res, err := lo.ListResources(ctx, nil); err != nil || len(res.Resources) != 1 || !strings.HasPrefix(res.Resources[0].URI, "gatehouse://links/") {
			t.Fatalf("links:read resources = %v %v", res, err)
		}
		if _, err := lo.ReadResource(ctx, &sdk.ReadResourceParams{URI: "gatehouse://tasks/issues/" + issue}); err == nil {
			t.Fatal("an issue was read with links:read")
		}
	})
}
