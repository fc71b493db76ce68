package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// createDatabase creates an empty database named gatehouse_bench_<random>
// through the server adminURL points at, and returns its URL and a
// function that drops it.
func createDatabase(ctx context.Context, adminURL string) (dbURL string, drop func() error, err error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("parse -pg: %w", err)
	}
	name := "gatehouse_bench_" + randomHex(6)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	drop = func() error {
		// Not the run's context: this runs after Ctrl-C too.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		defer conn.Close(context.Background())
		id := pgx.Identifier{name}.Sanitize()
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
			// Before PostgreSQL 13 (and on CockroachDB) there is no FORCE.
			if _, err2 := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id); err2 != nil {
				return fmt.Errorf("drop database %s: %w", name, err)
			}
		}
		return nil
	}
	return u.String(), drop, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
