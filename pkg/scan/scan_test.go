package scan_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// forgeDir lays out a forge work directory: blobs in .forge/files/inbound,
// sessions in .forge/sessions. It returns the work dir and the blob names.
func forgeDir(t *testing.T, blobs ...string) (string, []string) {
	t.Helper()
	root := t.TempDir()
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	must(t, os.MkdirAll(inbound, 0o700))
	must(t, os.MkdirAll(filepath.Join(root, ".forge", "sessions"), 0o700))
	var names []string
	for _, b := range blobs {
		d := sha256.Sum256([]byte(b))
		name := hex.EncodeToString(d[:]) + ".png"
		must(t, os.WriteFile(filepath.Join(inbound, name), []byte(b), 0o600))
		names = append(names, name)
	}
	return root, names
}

func writeSession(t *testing.T, root, name, body string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(root, ".forge", "sessions", name), []byte(body), 0o600))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func missingName(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:]) + ".png"
}

func run(t *testing.T, root string, jobs int) *scan.Report {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(root, ".forge", "files", "inbound"))
	must(t, err)
	defer st.Close()
	src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer src.Close()
	rep, err := scan.Run(ctx, scan.Options{
		Sources: []sessions.Source{src},
		Stores:  []scan.Target{{Store: st, Resolver: scan.NewResolver(st, []string{root})}},
		Jobs:    jobs,
	})
	must(t, err)
	return rep
}

func TestDanglingAndOutside(t *testing.T) {
	root, names := forgeDir(t, "cat", "dog")
	gone := missingName("gone")
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	writeSession(t, root, "t-1.json", fmt.Sprintf(`{"messages":[
	  {"parts":[{"media":{"uri":%q}}, {"media":{"uri":".forge/files/inbound/%s"}}]},
	  {"parts":[{"media":{"uri":%q}}]},
	  {"tool_calls":[{"function":{"arguments":"{\"path\": \"%s/../../../../etc/%s\"}"}}]}]}`,
		filepath.Join(inbound, names[0]), names[1], filepath.Join(inbound, gone), inbound, names[0]))
	writeSession(t, root, "t-2.json", fmt.Sprintf(`{"messages":[{"parts":[{"media":{"uri":"./%s"}}]}]}`, gone))
	writeSession(t, root, "t-3.json.tmp", `{"messages": [`)

	for _, jobs := range []int{1, 4} {
		rep := run(t, root, jobs)
		if !rep.Complete {
			t.Fatalf("jobs=%d: incomplete: %+v", jobs, rep.Problems)
		}
		s := rep.Sources[0]
		// The truncated leftover is read, as text, and is not a problem.
		if s.Documents != 2 || s.Leftovers != 1 || s.LeftoversAsText != 1 || s.References != 5 || s.DistinctBlobs != 4 {
			t.Errorf("jobs=%d: source report %+v", jobs, s)
		}
		if rep.DanglingReferences != 2 || rep.DanglingBlobs != 1 || len(rep.Dangling) != 2 {
			t.Errorf("jobs=%d: dangling %d refs %d blobs: %+v", jobs, rep.DanglingReferences, rep.DanglingBlobs, rep.Dangling)
		}
		wantPlaces := []string{"t-1.json#/messages/1/parts/0/media/uri", "t-2.json#/messages/0/parts/0/media/uri"}
		for i, d := range rep.Dangling {
			if !strings.HasSuffix(d.Place.String(), wantPlaces[i]) || d.Key != gone || !d.Missing {
				t.Errorf("jobs=%d: dangling[%d] = %s key %s", jobs, i, d.Place, d.Key)
			}
		}
		if len(rep.Outside) != 1 || !strings.HasSuffix(rep.Outside[0].Place.Pointer, "arguments!/path") {
			t.Errorf("jobs=%d: outside %+v", jobs, rep.Outside)
		}
	}
}

func TestTruncatedSessionIsIncomplete(t *testing.T) {
	root, names := forgeDir(t, "cat")
	writeSession(t, root, "ok.json", fmt.Sprintf(`{"uri": ".forge/files/inbound/%s"}`, names[0]))
	body := fmt.Sprintf(`{"messages": [{"uri": ".forge/files/inbound/%s"}, {"uri": "`, names[0])
	writeSession(t, root, "broken.json", body)
	rep := run(t, root, 2)
	if rep.Complete || len(rep.Problems) != 1 {
		t.Fatalf("complete=%v problems=%+v", rep.Complete, rep.Problems)
	}
	p := rep.Problems[0]
	if !strings.HasSuffix(p.Place.Document, "broken.json") || p.Place.Offset != int64(len(body)) || !strings.Contains(p.Err, "truncated") {
		t.Fatalf("problem %+v (len %d)", p, len(body))
	}
	if rep.References != 2 {
		t.Fatalf("references before the truncation point must still count: %d", rep.References)
	}
}

func TestWithoutStoreCountsDistinctByDigest(t *testing.T) {
	root, names := forgeDir(t, "cat")
	writeSession(t, root, "a.json", fmt.Sprintf(`["/x/%s", "/y/%s", "s3://b/k.png"]`, names[0], names[0]))
	ctx := context.Background()
	src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer src.Close()
	rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}})
	must(t, err)
	if rep.References != 3 || rep.DistinctBlobs != 2 || rep.ByStatus != nil {
		t.Fatalf("%+v", rep)
	}
}

func TestCancelledScanIsInterrupted(t *testing.T) {
	root, names := forgeDir(t, "cat")
	for i := range 50 {
		writeSession(t, root, fmt.Sprintf("s%02d.json", i), fmt.Sprintf(`{"uri": "/x/%s"}`, names[0]))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src, err := sessions.Open(context.Background(), filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer src.Close()
	rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}})
	must(t, err)
	if !rep.Interrupted || rep.Complete {
		t.Fatalf("interrupted=%v complete=%v", rep.Interrupted, rep.Complete)
	}
}

// TestManySourcesCountDistinctPerSource crosses the point where per-source
// membership moves out of the one-byte blob state into sets of its own.
func TestManySourcesCountDistinctPerSource(t *testing.T) {
	root, names := forgeDir(t, "a", "b", "c")
	ctx := context.Background()
	var srcs []sessions.Source
	for i := range 9 {
		dir := filepath.Join(root, fmt.Sprintf("s%d", i))
		must(t, os.MkdirAll(dir, 0o700))
		// Source i refers to blob a always, and to b when i is odd.
		body := fmt.Sprintf(`["/x/%s"`, names[0])
		if i%2 == 1 {
			body += fmt.Sprintf(`, "/x/%s", "/y/%s"`, names[1], names[1])
		}
		must(t, os.WriteFile(filepath.Join(dir, "s.json"), []byte(body+"]"), 0o600))
		src, err := sessions.Open(ctx, dir, sessions.Options{})
		must(t, err)
		defer src.Close()
		srcs = append(srcs, src)
	}
	rep, err := scan.Run(ctx, scan.Options{Sources: srcs})
	must(t, err)
	for i, s := range rep.Sources {
		want := int64(1 + i%2)
		if s.DistinctBlobs != want || s.References != 1+2*int64(i%2) {
			t.Errorf("source %d: %d distinct blobs, %d references; want %d distinct", i, s.DistinctBlobs, s.References, want)
		}
	}
	if rep.DistinctBlobs != 2 {
		t.Errorf("distinct blobs %d, want 2", rep.DistinctBlobs)
	}
}

// A leftover of an atomic write that is not whole JSON (two writers' bytes
// interleaved, a write cut short) may be the only copy of a session: it is no
// problem, and every byte of it reaches the retention rule, also after the
// point where the JSON breaks and across the chunks it is read in.
func TestMalformedLeftoverIsReadAsText(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".forge", "sessions"), 0o700))
	after := strings.Repeat("b", 64) + ".png"
	// A name straddling the first chunk boundary.
	pad := strings.Repeat(" ", 4<<20-40)
	straddling := strings.Repeat("c", 64) + ".png"
	writeSession(t, root, "t-new.json.tmp", `{"messages": [{"content": "x"} } garbage {"uri": "/srv/agent/.forge/files/inbound/`+after+`"`+pad+straddling)
	ctx := context.Background()
	src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer src.Close()
	var seen sync.Map
	rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}, CountOnly: true, Text: func(s []byte) {
		for _, n := range []string{after, straddling} {
			if bytes.Contains(s, []byte(n)) {
				seen.Store(n, true)
			}
		}
	}})
	must(t, err)
	if !rep.Complete || rep.Sources[0].LeftoversAsText != 1 {
		t.Fatalf("complete %v, sources %+v, problems %v", rep.Complete, rep.Sources, rep.Problems)
	}
	for _, n := range []string{after, straddling} {
		if _, ok := seen.Load(n); !ok {
			t.Errorf("%s never reached the retention rule", n)
		}
	}
}

// A leftover kept compressed under a name that does not say so (a bucket
// object stored gzip-encoded, "t-7.json.tmp") is read as text once
// decompressed, as its first bytes say: its names reach the retention rule.
// Before, its compressed bytes were read as text, and named nothing.
func TestCompressedLeftoverIsReadAsText(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".forge", "sessions"), 0o700))
	named := strings.Repeat("d", 64) + ".png"
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(`{"messages": [{"uri": "/srv/agent/.forge/files/inbound/` + named + `"}`))
	zw.Close()
	writeSession(t, root, "t-7.json.tmp", zb.String())
	ctx := context.Background()
	src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	must(t, err)
	defer src.Close()
	var seen atomic.Bool
	rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}, CountOnly: true, Text: func(s []byte) {
		if bytes.Contains(s, []byte(named)) {
			seen.Store(true)
		}
	}})
	must(t, err)
	if !rep.Complete || !seen.Load() {
		t.Fatalf("complete %v, the name reached the retention rule: %v (problems %v)", rep.Complete, seen.Load(), rep.Problems)
	}
}

// Without a store, the names of an item are recorded together, in parts of
// a bounded size: a document of more names than one part holds, names far
// apart repeating each other and names of another source among them, are
// all counted once per source and once in all.
func TestManyNamesInOneDocumentCountOnce(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	var srcs []sessions.Source
	const distinct = 6000
	for s, refs := range []int{10000, 300} {
		dir := filepath.Join(root, fmt.Sprintf("s%d", s))
		must(t, os.MkdirAll(dir, 0o700))
		var body strings.Builder
		body.WriteString("[")
		for i := range refs {
			if i > 0 {
				body.WriteString(",")
			}
			// Source 0 names 0, 1, ..., 5999, 0, 1, ...; source 1 names 0-299.
			fmt.Fprintf(&body, `{"uri": "/srv/a/.forge/files/inbound/%s"}`, missingName(fmt.Sprint(i%distinct)))
		}
		body.WriteString("]")
		must(t, os.WriteFile(filepath.Join(dir, "t.json"), []byte(body.String()), 0o600))
		src, err := sessions.Open(ctx, dir, sessions.Options{})
		must(t, err)
		defer src.Close()
		srcs = append(srcs, src)
	}
	for _, jobs := range []int{1, 2, 4} {
		rep, err := scan.Run(ctx, scan.Options{Sources: srcs, Jobs: jobs})
		must(t, err)
		if rep.References != 10300 || rep.DistinctBlobs != distinct ||
			rep.Sources[0].DistinctBlobs != distinct || rep.Sources[1].DistinctBlobs != 300 {
			t.Errorf("jobs %d: %d references, %d distinct (per source %d, %d); want 10300, %d (%d, 300)", jobs,
				rep.References, rep.DistinctBlobs, rep.Sources[0].DistinctBlobs, rep.Sources[1].DistinctBlobs, distinct, distinct)
		}
	}
}
