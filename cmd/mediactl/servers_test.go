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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
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
	return "endpoint=" + url.QueryEscape("http://"+stall.Addr()) + "&use_path_style=true&region=us-east-1"
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

// s3client is the S3 client of this script's bucket; close the bucket after.
func s3client(ts *testscript.TestScript) (*blob.Bucket, *s3.Client) {
	b, err := blob.OpenBucket(context.Background(), "s3://"+ts.Getenv("S3_BUCKET")+"?"+ts.Getenv("S3_QUERY"))
	ts.Check(err)
	var c *s3.Client
	if !b.As(&c) {
		b.Close()
		ts.Fatalf("the s3 bucket exposes no *s3.Client")
	}
	return b, c
}

// s3versioning Enabled|Suspended: set the versioning of this script's
// bucket, as an operator does with PutBucketVersioning.
func cmdS3Versioning(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || args[0] != "Enabled" && args[0] != "Suspended" {
		ts.Fatalf("usage: s3versioning Enabled|Suspended")
	}
	b, c := s3client(ts)
	defer b.Close()
	_, err := c.PutBucketVersioning(context.Background(), &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(ts.Getenv("S3_BUCKET")),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatus(args[0])},
	})
	ts.Check(err)
}

// s3versions KEY: print "N versions, M delete markers" of KEY in this
// script's bucket (ListObjectVersions).
func cmdS3Versions(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: s3versions KEY")
	}
	b, c := s3client(ts)
	defer b.Close()
	out, err := c.ListObjectVersions(context.Background(), &s3.ListObjectVersionsInput{Bucket: aws.String(ts.Getenv("S3_BUCKET")), Prefix: aws.String(args[0])})
	ts.Check(err)
	versions, markers := 0, 0
	for _, v := range out.Versions {
		if aws.ToString(v.Key) == args[0] {
			versions++
		}
	}
	for _, m := range out.DeleteMarkers {
		if aws.ToString(m.Key) == args[0] {
			markers++
		}
	}
	fmt.Fprintf(ts.Stdout(), "%d versions, %d delete markers\n", versions, markers)
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
