package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rogpeppe/go-internal/testscript"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
)

// s3Env is the static configuration every S3 client in the tests uses: fixed
// keys and no credential discovery that could reach a cloud metadata endpoint.
var s3Env = map[string]string{
	"AWS_ACCESS_KEY_ID":         "mediactl-test",
	"AWS_SECRET_ACCESS_KEY":     "mediactl-test-secret",
	"AWS_EC2_METADATA_DISABLED": "true",
	"AWS_REGION":                "us-east-1",
}

type s3Server struct {
	url     string
	backend *s3mem.Backend
	next    atomic.Int64
}

// startS3 runs gofakes3 on 127.0.0.1 for the duration of the test.
func startS3(t *testing.T) *s3Server {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	for k, v := range s3Env {
		t.Setenv(k, v)
	}
	return &s3Server{url: srv.URL, backend: backend}
}

// s3put KEY CONTENT: write an object into this script's bucket.
func cmdS3put(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: s3put KEY CONTENT")
	}
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, "s3://"+ts.Getenv("S3_BUCKET")+"?"+ts.Getenv("S3_QUERY"))
	ts.Check(err)
	defer b.Close()
	ts.Check(b.WriteAll(ctx, args[0], []byte(args[1]), nil))
}

// condition answers [pg]: a test PostgreSQL is running. Scripts say
// "[!pg] skip"; under CI=true a missing server is an error, not a skip.
func condition(cond string) (bool, error) {
	if cond != "pg" {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if os.Getenv("MEDIACTL_TEST_POSTGRES_URL") != "" {
		return true, nil
	}
	if os.Getenv("CI") == "true" {
		return false, fmt.Errorf("postgres not running: start it with scripts/services/postgres.sh (MEDIACTL_TEST_POSTGRES_URL unset)")
	}
	return false, nil
}

// pgexec @FILE | SQL...: run statements on the test PostgreSQL ($PG_URL), with
// $VARIABLES expanded in @FILE.
func cmdPgexec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pgexec @FILE | SQL...")
	}
	url := ts.Getenv("PG_URL")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	ts.Check(err)
	defer conn.Close(ctx)
	for _, a := range args {
		q := a
		if f, ok := strings.CutPrefix(a, "@"); ok {
			q = os.Expand(ts.ReadFile(f), ts.Getenv)
		}
		if _, err := conn.Exec(ctx, q); err != nil {
			ts.Fatalf("pgexec: %v", err)
		}
	}
}
