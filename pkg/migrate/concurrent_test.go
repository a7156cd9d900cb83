package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

// TestRewriteBesideAWriter: the agent keeps appending messages to its session
// files (read, modify, write a temporary file, rename — as forge saves) while
// migrate runs. Files the agent is writing are left alone as busy (their
// modification time is within the idle time), so none of the agent's messages
// is lost; once the agent is quiet, a later pass rewrites them.
func TestRewriteBesideAWriter(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	root, _ := forgeWorkdir(t)
	inbound := filepath.Join(root, ".forge", "files", "inbound")
	sessDir := filepath.Join(root, ".forge", "sessions")
	src := openStore(t, inbound)
	dst := openStore(t, srv.Bucket(t, "media"))
	j := journal(t, filepath.Join(t.TempDir(), "j.jsonl"))
	copyAll(t, migrate.Options{From: src, To: dst, Journal: j})

	files := []string{filepath.Join(sessDir, "t-1.json"), filepath.Join(sessDir, "t-2.json")}
	var appended [2]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				b, err := os.ReadFile(f)
				if err != nil {
					t.Error(err)
					return
				}
				var doc map[string]any
				if err := json.Unmarshal(b, &doc); err != nil {
					t.Errorf("%s: %v", f, err)
					return
				}
				doc["messages"] = append(doc["messages"].([]any), map[string]any{"role": "assistant", "content": fmt.Sprintf("reply %d", n)})
				out, _ := json.MarshalIndent(doc, "", "  ")
				tmp := f + ".tmp"
				if err := os.WriteFile(tmp, out, 0o600); err != nil {
					t.Error(err)
					return
				}
				if err := os.Rename(tmp, f); err != nil {
					t.Error(err)
					return
				}
				appended[i].Add(1)
				time.Sleep(200 * time.Microsecond)
			}
		}()
	}
	rw, err := sessions.OpenRewriter(ctx, sessDir, sessions.Options{})
	must(t, err)
	defer rw.Close()
	repl := replacerFor(j, src, dst, root)
	var busy int64
	for range 20 {
		rr, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j, MinIdle: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if rr.Changed != 0 {
			t.Fatalf("a session being written was rewritten: %+v", rr)
		}
		busy += rr.Busy
	}
	close(stop)
	wg.Wait()
	if busy != 40 {
		t.Fatalf("%d busy files over 20 passes, want 40", busy)
	}

	// Every message the agent appended is there.
	for i, f := range files {
		b, err := os.ReadFile(f)
		must(t, err)
		var doc struct{ Messages []any }
		must(t, json.Unmarshal(b, &doc))
		initial := map[int]int{0: 2, 1: 1}[i]
		if got, want := len(doc.Messages), initial+int(appended[i].Load()); got != want {
			t.Fatalf("%s holds %d messages, the agent wrote %d", filepath.Base(f), got, want)
		}
	}
	// With the agent quiet for longer than the idle time, one more pass leaves
	// nothing local.
	rr, err := migrate.Rewrite(ctx, migrate.RewriteOptions{Sources: []sessions.Rewriter{rw}, Replacer: repl, Journal: j, MinIdle: 2 * time.Second, Now: time.Now().Add(3 * time.Second)})
	must(t, err)
	if rr.Changed != 2 || rr.Busy != 0 {
		t.Fatalf("after the agent stopped: %+v", rr)
	}
	noneLocal(t, sessDir, src, root)
	t.Logf("agent appended %d and %d messages, all kept", appended[0].Load(), appended[1].Load())
}
