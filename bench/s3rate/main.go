// Command s3rate is the least a program must do to delete, copy or download
// every object of an S3 bucket: the AWS SDK alone, one listing, then
// DeleteObjects requests of 500 keys 8 at a time (delete), CopyObject 32 at a
// time into a prefix of the same bucket (copy), or GetObject with the body
// hashed by crypto/sha256 32 at a time (get) — no plan, no checks, no report.
// bench/bucket.sh times it beside mediactl gc and verify: what it reaches is
// the server's own rate, a ceiling no client of that server passes, so the
// script reports mediactl's share of it next to the ratio to rclone.
//
//	s3rate -endpoint URL -bucket B -op delete|copy|get
//
// Credentials and region come from the SDK's usual environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION).
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// copyPrefix is where -op copy puts its copies; the listing skips it, so a
// delete after a copy removes the originals only.
const copyPrefix = "s3rate-copies/"

func main() {
	endpoint := flag.String("endpoint", "", "S3 endpoint URL (path-style)")
	bucket := flag.String("bucket", "", "bucket")
	op := flag.String("op", "", "delete, copy or get")
	flag.Parse()
	if *endpoint == "" || *bucket == "" || (*op != "delete" && *op != "copy" && *op != "get") {
		fmt.Fprintln(os.Stderr, "usage: s3rate -endpoint URL -bucket B -op delete|copy|get")
		os.Exit(2)
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		fail(err)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(*endpoint)
		o.UsePathStyle = true
	})
	var keys []string
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			fail(err)
		}
		for _, o := range page.Contents {
			if !strings.HasPrefix(*o.Key, copyPrefix) && !strings.HasPrefix(*o.Key, ".mediactl/") {
				keys = append(keys, *o.Key)
			}
		}
	}

	var failed atomic.Int64
	report := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed.Add(1)
		}
	}
	var wg sync.WaitGroup
	switch *op {
	case "delete":
		sem := make(chan struct{}, 8)
		for i := 0; i < len(keys); i += 500 {
			ids := make([]types.ObjectIdentifier, 0, 500)
			for _, k := range keys[i:min(i+500, len(keys))] {
				ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: bucket,
					Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
				report(err)
				if err == nil {
					for _, e := range out.Errors {
						report(fmt.Errorf("delete %s: %s", aws.ToString(e.Key), aws.ToString(e.Message)))
					}
				}
			})
		}
	default:
		sem := make(chan struct{}, 32)
		for _, k := range keys {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if *op == "copy" {
					_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: bucket, Key: aws.String(copyPrefix + k),
						CopySource: aws.String(*bucket + "/" + k)})
					report(err)
					return
				}
				o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String(k)})
				if err != nil {
					report(err)
					return
				}
				h := sha256.New()
				_, err = io.Copy(h, o.Body)
				o.Body.Close()
				report(err)
			})
		}
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		fail(fmt.Errorf("%s: %d of %d objects failed", *op, n, len(keys)))
	}
	fmt.Printf("%s %d\n", *op, len(keys))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "s3rate:", err)
	os.Exit(1)
}
