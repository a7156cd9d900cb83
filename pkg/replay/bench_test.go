package replay_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// BenchmarkSeaweedFS rehydrates references of 100 KiB blobs from SeaweedFS
// (MEDIACTL_BENCH_REPLAY_N of them, 1,000 by default; one reference per
// operation, cycling): a plain gocloud read (bucket.NewReader + io.Copy), the
// Replayer without a cache, and the Replayer with a warm cache. bench/replay.sh
// runs it and prints the ratios.
func BenchmarkSeaweedFS(b *testing.B) {
	srv := storetest.SeaweedFS(b)
	u := srv.Bucket(b, "replay-bench")
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MEDIACTL_BENCH_REPLAY_N")); err == nil && v > 0 {
		n = v
	}
	size := 100 << 10
	s, err := store.OpenBucket(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	keys := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range keys {
		data := pngBlob(size)
		keys[i] = "inbound/" + sum(data) + ".png"
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs <- s.Put(ctx, keys[i], bytes.NewReader(data), store.PutOptions{ContentType: "image/png", Metadata: map[string]string{replay.MetadataKey: sum(data)}, Size: int64(size)})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	name := bucketName(b, u)
	refs := make([]string, n)
	for i, k := range keys {
		refs[i] = "s3://" + name + "/" + k
	}
	cfg := replay.Config{Buckets: []replay.Bucket{{URL: u, Prefixes: []string{"inbound/"}}}}

	b.Run("gocloud", func(b *testing.B) {
		bkt, err := blob.OpenBucket(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		defer bkt.Close()
		if rd, err := bkt.NewReader(ctx, keys[0], nil); err == nil { // connect
			io.Copy(io.Discard, rd)
			rd.Close()
		}
		b.SetBytes(int64(size))
		i := 0
		for b.Loop() {
			rd, err := bkt.NewReader(ctx, keys[i%n], nil)
			if err != nil {
				b.Fatal(err)
			}
			if k, err := io.Copy(io.Discard, rd); err != nil || k != int64(size) {
				b.Fatalf("read %d bytes: %v", k, err)
			}
			rd.Close()
			i++
		}
	})
	read := func(b *testing.B, r *replay.Replayer, ref string) replay.Source {
		rc, info, err := r.Open(ctx, ref)
		if err != nil {
			b.Fatal(err)
		}
		if k, err := io.Copy(io.Discard, rc); err != nil || k != int64(size) {
			b.Fatalf("read %d bytes: %v", k, err)
		}
		rc.Close()
		return info.Source
	}
	b.Run("nocache", func(b *testing.B) {
		r := newReplayer(b, cfg)
		read(b, r, refs[0]) // connect
		b.SetBytes(int64(size))
		i := 0
		for b.Loop() {
			read(b, r, refs[i%n])
			i++
		}
	})
	// interleaved reads each reference the three ways in turn (the order
	// rotating), so that the load of a shared machine falls on all three
	// alike, and reports the time per reference of each and their ratios.
	b.Run("interleaved", func(b *testing.B) {
		bkt, err := blob.OpenBucket(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		defer bkt.Close()
		plain := func(key string) {
			rd, err := bkt.NewReader(ctx, key, nil)
			if err != nil {
				b.Fatal(err)
			}
			if k, err := io.Copy(io.Discard, rd); err != nil || k != int64(size) {
				b.Fatalf("read %d bytes: %v", k, err)
			}
			rd.Close()
		}
		nocache := newReplayer(b, cfg)
		warmCfg := cfg
		warmCfg.Cache = filepath.Join(b.TempDir(), "cache")
		warm := newReplayer(b, warmCfg)
		for _, ref := range refs {
			read(b, warm, ref)
		}
		plain(keys[0])
		read(b, nocache, refs[0])
		var spent [3]time.Duration
		i := 0
		for b.Loop() {
			for j := range 3 {
				way := (i + j) % 3
				start := time.Now()
				switch way {
				case 0:
					plain(keys[i%n])
				case 1:
					read(b, nocache, refs[i%n])
				case 2:
					if src := read(b, warm, refs[i%n]); src != replay.FromCache {
						b.Fatalf("read from %s with a warm cache", src)
					}
				}
				spent[way] += time.Since(start)
			}
			i++
		}
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(i) }
		b.ReportMetric(per(spent[0]), "gocloud-ns/ref")
		b.ReportMetric(per(spent[1]), "nocache-ns/ref")
		b.ReportMetric(per(spent[2]), "warm-ns/ref")
		b.ReportMetric(per(spent[1])/per(spent[0]), "nocache/gocloud")
		b.ReportMetric(per(spent[1])/per(spent[2]), "nocache/warm")
	})
	b.Run("warmcache", func(b *testing.B) {
		cfg := cfg
		cfg.Cache = filepath.Join(b.TempDir(), "cache")
		r := newReplayer(b, cfg)
		for _, ref := range refs {
			read(b, r, ref)
		}
		b.SetBytes(int64(size))
		i := 0
		for b.Loop() {
			if src := read(b, r, refs[i%n]); src != replay.FromCache {
				b.Fatalf("read from %s with a warm cache", src)
			}
			i++
		}
	})
}
