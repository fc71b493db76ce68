package mcp_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestMCPLinks runs every Links tool against the Links API.
func TestMCPLinks(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		stranger, _ := env.Team(t)
		theirs := env.Do(t, "POST", "/links/v1/links", stranger.Token, map[string]any{"destinationUrl": "https://example.com/theirs"}).Want(t, 200).Str("link.id")
		cs := connect(t, env, bound(t, env, owner.Token, "", nil, env.URL+"/mcp"))
		api := owner.Token
		created := call(t, cs, "links_create_link", map[string]any{"destinationUrl": "https://example.com/a", "title": "A"})
		if created.IsError {
			t.Fatalf("create: %s", text(created))
		}
		id := generic(t, created.StructuredContent).(map[string]any)["link"].(map[string]any)["id"].(string)
		same(t, env, cs, api, "links_get_link", map[string]any{"id": id}, "GET", "/links/v1/links/"+id, nil)
		same(t, env, cs, api, "links_list_links", nil, "GET", "/links/v1/links", nil)
		same(t, env, cs, api, "links_get_link", map[string]any{"id": missing}, "GET", "/links/v1/links/"+missing, nil)
		same(t, env, cs, api, "links_get_link", map[string]any{"id": theirs}, "GET", "/links/v1/links/"+theirs, nil)
		same(t, env, cs, api, "links_update_link", map[string]any{"id": theirs, "title": "mine"}, "PATCH", "/links/v1/links/"+theirs, map[string]any{"title": "mine"})
		same(t, env, cs, api, "links_delete_link", map[string]any{"id": theirs}, "DELETE", "/links/v1/links/"+theirs, nil)
		same(t, env, cs, api, "links_create_link", map[string]any{"destinationUrl": "javascript:alert(1)"}, "POST", "/links/v1/links", map[string]any{"destinationUrl": "javascript:alert(1)"})
		same(t, env, cs, api, "links_create_link", map[string]any{"destinationUrl": 7}, "POST", "/links/v1/links", map[string]any{"destinationUrl": 7})
		if r := call(t, cs, "links_update_link", map[string]any{"id": id, "title": "B", "active": false}); r.IsError {
			t.Fatalf("update: %s", text(r))
		}
		same(t, env, cs, api, "links_get_link", map[string]any{"id": id}, "GET", "/links/v1/links/"+id, nil)
		if r := call(t, cs, "links_delete_link", map[string]any{"id": id}); r.IsError || text(r) != "link deleted" {
			t.Fatalf("delete: %v %q", r.IsError, text(r))
		}
		same(t, env, cs, api, "links_get_link", map[string]any{"id": id}, "GET", "/links/v1/links/"+id, nil)
	})
}

// TestMCPForms runs the Forms tools against the Forms API.
func TestMCPForms(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		stranger, _ := env.Team(t)
		form := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact"}).Want(t, 200).Str("form.id")
		theirs := env.Do(t, "POST", "/forms/v1/forms", stranger.Token, map[string]any{"name": "Theirs"}).Want(t, 200).Str("form.id")
		env.Do(t, "POST", "/forms/f/"+form, "", map[string]string{"email": "a@example.com", "message": "hello"}).Want(t, 200)
		cs := connect(t, env, bound(t, env, owner.Token, "", nil, env.URL+"/mcp"))
		api := owner.Token
		same(t, env, cs, api, "forms_list_forms", nil, "GET", "/forms/v1/forms", nil)
		same(t, env, cs, api, "forms_list_submissions", map[string]any{"formId": form}, "GET", "/forms/v1/forms/"+form+"/submissions", nil)
		same(t, env, cs, api, "forms_list_submissions", map[string]any{"formId": missing}, "GET", "/forms/v1/forms/"+missing+"/submissions", nil)
		same(t, env, cs, api, "forms_list_submissions", map[string]any{"formId": theirs}, "GET", "/forms/v1/forms/"+theirs+"/submissions", nil)
		if r := call(t, cs, "forms_list_submissions", map[string]any{"formId": 3}); !r.IsError || text(r) != "formId must be a string" {
			t.Fatalf("bad formId: %v %q", r.IsError, text(r))
		}
	})
}

// TestMCPSign runs every Sign tool against the Sign API.
func TestMCPSign(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		stranger, _ := env.Team(t)
		doc := func(tok string) string {
			d := map[string]any{"name": "Contract", "message": "Please sign", "recipients": []map[string]any{{"name": "Signer", "email": testenv.Email()}}}
			return env.CreateDocument(t, tok, testenv.TestPDF, d).Want(t, 200).Str("document.id")
		}
		id, theirs := doc(owner.Token), doc(stranger.Token)
		cs := connect(t, env, bound(t, env, owner.Token, "", nil, env.URL+"/mcp"))
		api := owner.Token
		same(t, env, cs, api, "sign_list_documents", nil, "GET", "/sign/v1/documents", nil)
		same(t, env, cs, api, "sign_get_document", map[string]any{"id": id}, "GET", "/sign/v1/documents/"+id, nil)
		same(t, env, cs, api, "sign_get_document", map[string]any{"id": missing}, "GET", "/sign/v1/documents/"+missing, nil)
		same(t, env, cs, api, "sign_get_document", map[string]any{"id": theirs}, "GET", "/sign/v1/documents/"+theirs, nil)
		same(t, env, cs, api, "sign_send_document", map[string]any{"id": theirs}, "POST", "/sign/v1/documents/"+theirs+"/send", nil)
		same(t, env, cs, api, "sign_void_document", map[string]any{"id": theirs}, "POST", "/sign/v1/documents/"+theirs+"/void", map[string]any{})
		same(t, env, cs, api, "sign_duplicate_document", map[string]any{"id": theirs}, "POST", "/sign/v1/documents/"+theirs+"/duplicate", map[string]any{})
		same(t, env, cs, api, "sign_duplicate_document", map[string]any{"id": id, "name": 5}, "POST", "/sign/v1/documents/"+id+"/duplicate", map[string]any{"name": 5})
		if r := call(t, cs, "sign_send_document", map[string]any{"id": id}); r.IsError {
			t.Fatalf("send: %s", text(r))
		}
		same(t, env, cs, api, "sign_get_document", map[string]any{"id": id}, "GET", "/sign/v1/documents/"+id, nil)
		same(t, env, cs, api, "sign_send_document", map[string]any{"id": id}, "POST", "/sign/v1/documents/"+id+"/send", nil) // sent already
		dup := call(t, cs, "sign_duplicate_document", map[string]any{"id": id, "name": "Copy"})
		if dup.IsError {
			t.Fatalf("duplicate: %s", text(dup))
		}
		copyID := generic(t, dup.StructuredContent).(map[string]any)["document"].(map[string]any)["id"].(string)
		same(t, env, cs, api, "sign_get_document", map[string]any{"id": copyID}, "GET", "/sign/v1/documents/"+copyID, nil)
		if r := call(t, cs, "sign_void_document", map[string]any{"id": id, "reason": "wrong amount"}); r.IsError {
			t.Fatalf("void: %s", text(r))
		}
		same(t, env, cs, api, "sign_get_document", map[string]any{"id": id}, "GET", "/sign/v1/documents/"+id, nil)
		same(t, env, cs, api, "sign_void_document", map[string]any{"id": id}, "POST", "/sign/v1/documents/"+id+"/void", map[string]any{}) // voided already
	})
}
