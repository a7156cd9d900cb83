// Package sessionstest finds the PostgreSQL server that session-source tests
// run against. The server is a real one, started outside the tests by
//
//	eval "$(scripts/services/postgres.sh start)"
//
// which exports its URL in PostgresEnv. Without it, tests that need it are
// skipped on a developer's machine and fail on CI (CI=true), so that a CI run
// never passes by skipping them.
package sessionstest

import (
	"errors"
	"os"
	"testing"
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
