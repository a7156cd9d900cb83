package gc_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
	"github.com/mediactl/mediactl/pkg/storelock/locktest"
	"github.com/mediactl/mediactl/pkg/trash"
)

// TestBucketBatchSweep: on a bucket that removes in batches — gofakes3 and a
// real SeaweedFS — gc with the trash and with --no-trash removes exactly the
// unreferenced blobs and keeps every referenced one, whether the candidates
// are dense in the store (checked again by listing their key range) or
// sparse (a Stat each); a blob a writer replaced after the plan stays; the
// trash run restores every blob it took.
func TestBucketBatchSweep(t *testing.T) {
	servers := map[string]func(t *testing.T) string{
		"gofakes3": func(t *testing.T) string {
			return storetest.StartS3(t, nil).Bucket(t, fmt.Sprintf("sweep-%d", time.Now().UnixNano()))
		},
		"seaweedfs": func(t *testing.T) string { return storetest.SeaweedFS(t).Bucket(t, "sweep") },
	}
	for _, server := range []string{"gofakes3", "seaweedfs"} {
		for _, c := range []struct {
			name       string
			blobs      int
			referenced func(i int) bool
		}{
			{"dense", 1200, func(i int) bool { return i%10 == 0 }}, // 90 % go: two batches
			{"sparse", 120, func(i int) bool { return i%10 != 0 }}, // 10 % go
		} {
			for _, noTrash := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/no-trash=%v", server, c.name, noTrash), func(t *testing.T) {
					st, err := store.Open(context.Background(), servers[server](t))
					must(t, err)
					defer st.Close()
					sweepBucket(t, st, c.blobs, c.referenced, noTrash)
				})
			}
		}
	}
}

func sweepBucket(t *testing.T, st store.Store, n int, referenced func(int) bool, noTrash bool) {
	ctx := context.Background()
	if _, ok := store.AsBatchRemover(st); !ok {
		t.Fatal("the bucket does not remove in batches: the test would test the single path")
	}
	keys := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		content := fmt.Sprintf("blob %d", i)
		d := sha256.Sum256([]byte(content))
		keys[i] = hex.EncodeToString(d[:]) + ".png"
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := st.Put(ctx, keys[i], strings.NewReader(content), store.PutOptions{Size: int64(len(content))}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A forge session (json.MarshalIndent) naming the referenced blobs.
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var msgs []message
	var kept, gone []string
	for i, k := range keys {
		if referenced(i) {
			msgs = append(msgs, message{"user", "look at sha256:" + strings.TrimSuffix(k, ".png") + " <here> & there"})
			kept = append(kept, k)
		} else {
			gone = append(gone, k)
		}
	}
	doc, err := json.MarshalIndent(map[string]any{"id": "s1", "messages": msgs}, "", "  ")
	must(t, err)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "s1.json"), doc, 0o600))
	src, err := sessions.Open(ctx, dir, sessions.Options{})
	must(t, err)
	defer src.Close()

	p, err := gc.MakePlan(ctx, gc.Options{Store: st, Sessions: []sessions.Source{src}, Now: time.Now().Add(48 * time.Hour)})
	must(t, err)
	if p.Candidates.Len() != len(gone) {
		t.Fatalf("plan: %d candidates, want %d", p.Candidates.Len(), len(gone))
	}
	// A writer replaces one candidate after the plan (another size): it stays.
	replaced := gone[len(gone)/2]
	must(t, st.Put(ctx, replaced, strings.NewReader("rewritten, longer"), store.PutOptions{}))

	res, err := p.Execute(ctx, locktest.Of(t, st), gc.ExecOptions{NoTrash: noTrash})
	must(t, err)
	removed := res.Trashed + res.Deleted
	if removed != int64(len(gone)-1) || len(res.Failed) != 0 || res.NotAttempted != 0 ||
		len(res.Skipped) != 1 || res.Skipped[0].Key != replaced {
		t.Fatalf("removed %d of %d, skipped %v, failed %v, not attempted %d", removed, len(gone)-1, res.Skipped, res.Failed, res.NotAttempted)
	}
	var left []string
	must(t, st.List(ctx, "", func(e store.Entry) error { left = append(left, e.Key); return nil }))
	want := append(slices.Clone(kept), replaced)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("left %d blobs, want the %d referenced and the replaced one", len(left), len(kept))
	}
	if noTrash {
		if res.Run != "" {
			t.Errorf("a run without the trash names trash run %q", res.Run)
		}
		return
	}
	rr, err := trash.Restore(ctx, locktest.Of(t, st), res.Run)
	must(t, err)
	if rr.Restored != int64(len(gone)-1) {
		t.Fatalf("restored %d, want %d", rr.Restored, len(gone)-1)
	}
	n2 := 0
	must(t, st.List(ctx, "", func(e store.Entry) error { n2++; return nil }))
	if n2 != n {
		t.Fatalf("after the restore the store holds %d blobs, want %d", n2, n)
	}
}
