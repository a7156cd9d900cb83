package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenUsageErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "coffer.db")
	createCofferDB(t, db)
	for _, tc := range []struct {
		spec, query string
		want        string // in the message
	}{
		{spec: "", want: "empty session source"},
		{spec: "  ", want: "empty session source"},
		{spec: "sqlite://" + db, want: "sqlite:PATH"},
		{spec: "sqlite:", want: "missing database path"},
		{spec: "mysql://u@h/db", want: "unsupported scheme"},
		{spec: "http://example.com/sessions.json", want: "unsupported scheme"},
		{spec: dir, query: "SELECT 1", want: "only applies to SQL sources"},
		{spec: "mem://", query: "SELECT 1", want: "only applies to SQL sources"},
		{spec: db, want: "write sqlite:" + db},
		{spec: "sqlite:" + dir, want: "not a regular file"},
		{spec: "postgres://u:pw@host:notaport/db", want: "not a valid PostgreSQL URL"},
	} {
		src, err := Open(context.Background(), tc.spec, Options{Query: tc.query})
		if err == nil {
			src.Close()
			t.Errorf("Open(%q, query %q): no error", tc.spec, tc.query)
			continue
		}
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q, query %q) = %v, want ErrUsage saying %q", tc.spec, tc.query, err, tc.want)
		}
		if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("error leaks a password: %v", err)
		}
	}
}

func TestOpenKinds(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "coffer.db")
	createCofferDB(t, db)
	for spec, want := range map[string]any{
		dir:               &filesSource{},
		"sqlite:" + db:    &sqliteSource{},
		"SQLite:" + db:    &sqliteSource{},
		"mem://":          &bucketSource{},
		"file://" + dir:   &bucketSource{},
		"relative/path":   &filesSource{},
		"C:sessions.json": &filesSource{}, // no "://": a path
	} {
		src, err := Open(context.Background(), spec, Options{})
		if err != nil {
			t.Errorf("Open(%q): %v", spec, err)
			continue
		}
		if got, w := typeName(src), typeName(want); got != w {
			t.Errorf("Open(%q) = %s, want %s", spec, got, w)
		}
		if src.String() != spec {
			t.Errorf("Open(%q).String() = %q", spec, src.String())
		}
		src.Close()
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *filesSource:
		return "files"
	case *sqliteSource:
		return "sqlite"
	case *bucketSource:
		return "bucket"
	case *pgSource:
		return "postgres"
	}
	return "?"
}

// TestPostgresConnectFailure needs no server: nothing listens on port 1.
func TestPostgresConnectFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, "postgres://someone:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", Options{})
	if err == nil {
		t.Fatal("no error connecting to a closed port")
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2") {
		t.Errorf("error leaks the password: %v", err)
	}
	if !strings.Contains(msg, "127.0.0.1:1") {
		t.Errorf("error does not name the host: %v", err)
	}
	if errors.Is(err, ErrUsage) {
		t.Errorf("a connection failure is not a usage error: %v", err)
	}
}

func TestSQLiteMissingFileNotCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	_, err := Open(context.Background(), "sqlite:"+path, Options{})
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a missing database: err = %v, want not-exist naming the path", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the missing database was created: %v", err)
	}
}
