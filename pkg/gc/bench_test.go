package gc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// synthStore lists n content-addressed blobs, made up on the fly, as a local
// store of bench/gc.sh would: small, old, every key a fresh string.
type synthStore struct{ n int }

func synthKey(i int) string {
	d := sha256.Sum256(strconv.AppendInt(nil, int64(i), 10))
	return fmt.Sprintf("%x.png", d)
}

func (s synthStore) Location() string { return "/synthetic/inbound" }
func (s synthStore) List(ctx context.Context, prefix string, fn func(store.Entry) error) error {
	old := time.Now().Add(-1000 * time.Hour)
	for i := range s.n {
		if err := fn(store.Entry{Key: synthKey(i), Size: int64(1000 + i%4000), ModTime: old.Add(time.Duration(i) * time.Millisecond)}); err != nil {
			return err
		}
	}
	return nil
}
func (s synthStore) Stat(context.Context, string) (store.Entry, error) {
	return store.Entry{}, errors.ErrUnsupported
}
func (s synthStore) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, errors.ErrUnsupported
}
func (s synthStore) Put(context.Context, string, io.Reader, store.PutOptions) error {
	return errors.ErrUnsupported
}
func (s synthStore) Delete(context.Context, string) error { return errors.ErrUnsupported }
func (s synthStore) Close() error                         { return nil }

// synthSessions holds forge sessions of perDoc messages each, which refer to
// every other blob of a synthStore of n: half the blobs are referenced.
type synthSessions struct{ n, perDoc int }

func (s synthSessions) String() string { return "synthetic sessions" }
func (s synthSessions) Close() error   { return nil }
func (s synthSessions) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	var c sessions.Counts
	for first := 0; first < s.n; first += 2 * s.perDoc {
		first := first
		open := func() (io.ReadCloser, error) {
			var b bytes.Buffer
			b.WriteString(`{"task_id": "t", "messages": [`)
			for i := first; i < min(first+2*s.perDoc, s.n); i += 2 {
				if i > first {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"role": "user", "content": "what is in this picture? it was taken at the lake", "parts": [{"type": "image", "media": {"mimeType": "image/png", "uri": "/srv/agent/.forge/files/inbound/%s"}}]}`, synthKey(i))
			}
			b.WriteString("]}\n")
			return io.NopCloser(&b), nil
		}
		c.Documents++
		if err := fn(sessions.Item{Place: ref.Place{Source: s.String(), Document: fmt.Sprint(first, ".json")}, Open: open, Size: -1}); err != nil {
			return c, err
		}
	}
	return c, nil
}

// heapSampler follows the bytes of heap objects (live and not yet swept),
// as often as every millisecond, and keeps the largest value.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := heapObjects(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 { close(h.stop); <-h.done; return h.peak.Load() }

// BenchmarkPlanMillion makes the refcount plan of bench/gc.sh without its
// files: a store of 1,000,000 content-addressed blobs (MEDIACTL_BENCH_BLOBS to
// change it), sessions referring to half of them. It reports the heap the
// plan keeps per blob (live-B/blob) and the largest heap seen while planning
// (peak-heap-B/blob), with the collector set as the mediactl command sets it.
// Peak RSS adds to the peak heap the runtime's own memory and the pages of the
// binary (about 40 MB for mediactl).
func BenchmarkPlanMillion(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("MEDIACTL_BENCH_BLOBS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(gc.PlanGCPercent))
	}
	opts := gc.Options{Store: synthStore{n}, Sessions: []sessions.Source{synthSessions{n, 1000}}}
	var live, peak uint64
	for b.Loop() {
		runtime.GC()
		base := heapObjects()
		h := startHeapSampler()
		p, err := gc.MakePlan(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		peak = h.Stop() - base
		runtime.GC()
		live = heapObjects() - base
		if p.Blobs != int64(n) || p.Referenced != int64((n+1)/2) || p.Candidates.Len() != n/2 {
			b.Fatalf("plan of %d blobs, %d referenced, %d candidates", p.Blobs, p.Referenced, p.Candidates.Len())
		}
		runtime.KeepAlive(p)
	}
	b.ReportMetric(float64(live)/float64(n), "live-B/blob")
	b.ReportMetric(float64(peak)/float64(n), "peak-heap-B/blob")
}
