// Package sessionstest finds the PostgreSQL server that session-source tests
// run against. The server is a real one, started outside the tests by
//
//	eval "$(scripts/services/postgres.sh start)"
//
// which exports its URL in PostgresEnv. Without it, tests that need it are
// skipped on a developer's machine and fail on CI (CI=true), so that a CI run
// never passes by skipping them.
//
// The conformance suite that every session source and rewriter runs is in
// package sessionstest/conformance.
package sessionstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// PostgresEnv names the variable holding the test server's URL
// (postgres://USER@127.0.0.1:PORT/DB?sslmode=disable).
const PostgresEnv = "MEDIACTL_TEST_POSTGRES_URL"

// LookupPostgres returns the test server's URL, or "" when none is running. On
// CI a missing server is an error.
func LookupPostgres() (string, error) {
	if u := os.Getenv(PostgresEnv); u != "" {
		return u, nil
	}
	if os.Getenv("CI") == "true" {
		return "", errors.New("postgres not running: start it with scripts/services/postgres.sh (" + PostgresEnv + " unset)")
	}
	return "", nil
}

// Postgres returns the test server's URL, skipping the test when none is
// running (failing it on CI).
func Postgres(t testing.TB) string {
	t.Helper()
	u, err := LookupPostgres()
	if err != nil {
		t.Fatal(err)
	}
	if u == "" {
		t.Skip(PostgresEnv + " not set: start a server with eval \"$(scripts/services/postgres.sh start)\"")
	}
	return u
}

// PostgresDatabase creates a database of its own on the test server, named
// prefix and a random suffix, dropped when the test ends, and returns its
// URL: a source reads every schema of its database, and other tests' tables
// come and go in the shared one meanwhile.
func PostgresDatabase(t testing.TB, prefix string) string {
	t.Helper()
	base := Postgres(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	name := prefix + "_" + hex.EncodeToString(rnd[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		admin.Close(context.Background())
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
