package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
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
	t    *testing.T
	// stalls holds each script's proxy to the server, by its bucket.
	stalls sync.Map
}

// startS3 runs an S3 server on 127.0.0.1 for the duration of the test.
func startS3(t *testing.T) *s3Server {
	return &s3Server{S3: storetest.StartS3(t, nil), t: t}
}

// stallQuery starts a storetest.Stall proxy to the server for the script
// whose bucket is bucket, and returns the URL query that reaches the server
// through it, with io_timeout=1s.
func (s *s3Server) stallQuery(bucket string) string {
	stall := storetest.NewStall(s.t, strings.TrimPrefix(s.Endpoint, "http://"))
	s.stalls.Store(bucket, stall)
	return "endpoint=" + url.QueryEscape("http://"+stall.Addr()) + "&use_path_style=true&region=us-east-1&io_timeout=1s"
}

// stall hold|release: stop every connection of this script's proxy to the S3
// server ($STALL_QUERY), open or new, or let them flow again.
func (s *s3Server) cmdStall(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stall hold|release")
	}
	v, ok := s.stalls.Load(ts.Getenv("S3_BUCKET"))
	if !ok {
		ts.Fatalf("no proxy for this script")
	}
	switch stall := v.(*storetest.Stall); args[0] {
	case "hold":
		stall.HoldAll()
	case "release":
		stall.Release()
	default:
		ts.Fatalf("usage: stall hold|release")
	}
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
	switch cond {
	case "pg":
		u, err := sessionstest.LookupPostgres()
		return u != "", err
	case "root":
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
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
