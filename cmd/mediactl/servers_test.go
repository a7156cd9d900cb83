package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mediactl/mediactl/pkg/sessions/sessionstest"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/rogpeppe/go-internal/testscript"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
)

type s3Server struct {
	*storetest.S3
	next atomic.Int64
}

// startS3 runs an S3 server on 127.0.0.1 for the duration of the test.
func startS3(t *testing.T) *s3Server {
	return &s3Server{S3: storetest.StartS3(t, nil)}
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
	u, err := sessionstest.LookupPostgres()
	return u != "", err
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
