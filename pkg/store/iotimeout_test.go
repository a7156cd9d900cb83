package store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// stalledBuckets are the services a bucket store talks to over HTTP, each
// reached through a storetest.Stall proxy, with io_timeout=1s.
var stalledBuckets = []struct {
	name string
	open func(t *testing.T) (string, *storetest.Stall)
}{
	{"s3", func(t *testing.T) (string, *storetest.Stall) {
		sw := storetest.SeaweedFS(t)
		return throughStall(t, sw.Bucket(t, "iotimeout"), "endpoint", sw.Endpoint)
	}},
	{"gs", func(t *testing.T) (string, *storetest.Stall) {
		g := storetest.StartGCS(t)
		u := g.Bucket(t, uniqueName("iotimeout", 1))
		stall := storetest.NewStall(t, os.Getenv("STORAGE_EMULATOR_HOST"))
		t.Setenv("STORAGE_EMULATOR_HOST", stall.Addr())
		return u + "?io_timeout=1s", stall
	}},
	{"azblob", func(t *testing.T) (string, *storetest.Stall) {
		a := storetest.StartAzurite(t)
		return throughStall(t, a.Container(t, "iotimeout"), "domain", a.Addr)
	}},
}

// throughStall points the URL parameter param of rawURL (the service's
// address, a URL or HOST:PORT) at a new Stall proxy to it, and sets
// io_timeout=1s.
func throughStall(t *testing.T, rawURL, param, addr string) (string, *storetest.Stall) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	hostPort := strings.TrimPrefix(addr, "http://")
	stall := storetest.NewStall(t, hostPort)
	q := u.Query()
	q.Set(param, strings.Replace(addr, hostPort, stall.Addr(), 1))
	q.Set("io_timeout", "1s")
	u.RawQuery = q.Encode()
	return u.String(), stall
}

// TestIOTimeout: a bucket connection that stops moving bytes ends the request
// instead of leaving the run waiting for ever. A stalled pooled connection is
// retried on a new one, and the request succeeds. A service that answers no
// connection fails the request with an IOTimeoutError, once the SDK's
// retries are spent. A body that stops mid-read fails the read, never ends
// it early as if complete (GCS's reader resumes on a new connection: it must
// then return the whole content). Each case ends under a two-minute deadline;
// without the timeout none of them would end before it.
func TestIOTimeout(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<13) // 128 KiB
	for _, sb := range stalledBuckets {
		t.Run(sb.name, func(t *testing.T) {
			spec, stall := sb.open(t)
			s := openT(t, spec)
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := s.Put(ctx, "a.bin", bytes.NewReader(content), store.PutOptions{}); err != nil {
				t.Fatalf("Put through the proxy: %v", err)
			}

			// The pooled connection stalls, and so does the next one
			// dialed (the pool may have closed the first already): a
			// request meets a stall either way, and a retry gets through.
			stall.HoldOpen()
			stall.HoldNext(1)
			if _, err := s.Stat(ctx, "a.bin"); err != nil {
				t.Fatalf("Stat with the pooled connections stalled: %v, want a retry on a new connection", err)
			}
			if stall.Stalled() == 0 {
				t.Fatal("no request met a stalled connection: the case tests nothing")
			}
			stall.Release()

			stall.HoldAfter(64 << 10)
			r, err := s.Open(ctx, "a.bin")
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			var te *store.IOTimeoutError
			switch {
			case ctx.Err() != nil:
				t.Fatalf("the read ended only with the test's deadline: %v", err)
			case err == nil && sb.name != "gs":
				t.Fatalf("read of a body stalled after 64 KiB ended without an error (%d of %d bytes)", len(got), len(content))
			case err == nil && !bytes.Equal(got, content):
				t.Fatalf("read of a body stalled after 64 KiB, resumed, returned %d bytes that differ from the %d written", len(got), len(content))
			case err != nil && !errors.As(err, &te):
				t.Errorf("stalled read: %v, want an IOTimeoutError", err)
			}
			stall.Release()

			if sb.name == "gs" {
				// Every request of GCS's reader gets its answer's headers
				// and then no byte: the read ends, within three timeouts
				// of no byte, instead of reopening for ever.
				stall.HoldAfterHeaders()
				r, err := s.Open(ctx, "a.bin")
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				_, err = io.Copy(io.Discard, r)
				r.Close()
				if ctx.Err() != nil || !errors.As(err, &te) || errors.Is(err, context.Canceled) {
					t.Fatalf("a read whose every request stalls: %v, want an IOTimeoutError, not an interruption", err)
				}
				stall.Release()
			}

			stall.HoldAll()
			_, err = s.Stat(ctx, "a.bin")
			if err == nil {
				t.Fatal("Stat succeeded with every connection stalled")
			}
			if ctx.Err() != nil {
				t.Fatalf("Stat ended only with the test's deadline: %v", err)
			}
			if !errors.As(err, &te) {
				t.Errorf("Stat with every connection stalled: %v, want an IOTimeoutError", err)
			}
			if !strings.Contains(err.Error(), "io_timeout") {
				t.Errorf("Stat error %q does not name io_timeout", err)
			}
		})
	}
}
