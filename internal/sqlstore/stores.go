package sqlstore

import (
	"context"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/webhooks"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The module stores: one type per Store interface, each a view of the DB.
// Tx binds a new value of the same type to the transaction, so a module's
// transaction is its own Store with no conversion.

var (
	_ workspace.Store = (*Workspace)(nil)
	_ identity.Store  = (*Identity)(nil)
	_ oauth.Store     = (*OAuth)(nil)
	_ tasks.Store     = (*Tasks)(nil)
	_ forms.Store     = (*Forms)(nil)
	_ links.Store     = (*Links)(nil)
	_ sign.Store      = (*Sign)(nil)
	_ webhooks.Store  = (*Webhooks)(nil)
)

// Workspace implements workspace.Store: orgs, members, invitations, teams,
// tool switches, org keys, domains, audit, and the user rows workspace reads.
type Workspace struct{ conn }

// Workspace returns the workspace store.
func (db *DB) Workspace() *Workspace { return &Workspace{conn{db: db}} }

// Tx implements workspace.Store.
func (s *Workspace) Tx(ctx context.Context, fn func(tx workspace.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Workspace{c}) })
}

// Identity implements identity.Store: people, credentials and sessions,
// and through the embedded Workspace, workspace's tables on the same
// connection or transaction.
type Identity struct{ Workspace }

// Identity returns the identity store.
func (db *DB) Identity() *Identity { return &Identity{Workspace{conn{db: db}}} }

// Tx implements identity.Store.
func (s *Identity) Tx(ctx context.Context, fn func(tx identity.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Identity{Workspace{c}}) })
}

// Ping implements identity.Store.
func (s *Identity) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// OAuth implements oauth.Store: clients, authorization and device codes.
type OAuth struct{ conn }

// OAuth returns the authorization server's store.
func (db *DB) OAuth() *OAuth { return &OAuth{conn{db: db}} }

// Tx implements oauth.Store.
func (s *OAuth) Tx(ctx context.Context, fn func(tx oauth.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&OAuth{c}) })
}

// Identity implements oauth.Store: the identity store on the same
// connection or transaction.
func (s *OAuth) Identity() identity.Store { return &Identity{Workspace{s.conn}} }

// Tasks implements tasks.Store.
type Tasks struct{ conn }

// Tasks returns the Tasks tool's store.
func (db *DB) Tasks() *Tasks { return &Tasks{conn{db: db}} }

// Tx implements tasks.Store.
func (s *Tasks) Tx(ctx context.Context, fn func(tx tasks.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Tasks{c}) })
}

// Forms implements forms.Store.
type Forms struct{ conn }

// Forms returns the Forms tool's store.
func (db *DB) Forms() *Forms { return &Forms{conn{db: db}} }

// Tx implements forms.Store.
func (s *Forms) Tx(ctx context.Context, fn func(tx forms.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Forms{c}) })
}

// Links implements links.Store.
type Links struct{ conn }

// Links returns the Links tool's store.
func (db *DB) Links() *Links { return &Links{conn{db: db}} }

// Tx implements links.Store.
func (s *Links) Tx(ctx context.Context, fn func(tx links.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Links{c}) })
}

// Webhooks implements links.Store: the webhooks store on the same
// connection or transaction.
func (s *Links) Webhooks() webhooks.Store { return &Webhooks{s.conn} }

// Sign implements sign.Store.
type Sign struct{ conn }

// Sign returns the Sign tool's store.
func (db *DB) Sign() *Sign { return &Sign{conn{db: db}} }

// Tx implements sign.Store.
func (s *Sign) Tx(ctx context.Context, fn func(tx sign.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Sign{c}) })
}

// Webhooks implements sign.Store: the webhooks store on the same
// connection or transaction.
func (s *Sign) Webhooks() webhooks.Store { return &Webhooks{s.conn} }

// Webhooks implements webhooks.Store.
type Webhooks struct{ conn }

// Webhooks returns the webhooks' store.
func (db *DB) Webhooks() *Webhooks { return &Webhooks{conn{db: db}} }

// Tx implements webhooks.Store.
func (s *Webhooks) Tx(ctx context.Context, fn func(tx webhooks.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&Webhooks{c}) })
}
