package verify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/verify"
)

// The shards of a split verify every blob exactly once, and together report
// what one run on the whole store reports: corrupt blobs, dangling
// references, orphans.
func TestShardsVerifyEveryBlobOnce(t *testing.T) {
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			st := k.open(t)
			corrupt := corruptStore(t, st, 60)
			for i := range 20 {
				put(t, st, fmt.Sprintf("uploads/user %d/photo %d.jpg", i%3, i), []byte(fmt.Sprint("photo ", i)))
			}
			// Sessions (forge's MarshalIndent spelling) name some blobs, and
			// some that are not there.
			var listed []string
			must(t, st.List(context.Background(), "", func(e store.Entry) error { listed = append(listed, e.Key); return nil }))
			base := st.Location()
			if b, ok := st.(store.Bucket); ok {
				base = b.Scheme() + "://" + b.Name()
			}
			dir := t.TempDir()
			var body string
			for i, key := range listed {
				if i%3 == 0 {
					body += fmt.Sprintf(`{"type": "image", "media": {"mimeType": "image/png", "uri": %q}},`, base+"/"+key)
				}
			}
			for i := range 9 {
				body += fmt.Sprintf(`{"type": "image", "media": {"mimeType": "image/png", "uri": %q}},`, fmt.Sprintf("%s/%064x.png", base, i+1))
			}
			must(t, os.WriteFile(filepath.Join(dir, "t-1.json"), []byte(`{"task_id": "t-1", "messages": [{"role": "user", "content": "look \u0026 see", "parts": [`+body[:len(body)-1]+`]}]}`), 0o600))
			src, err := sessions.Open(context.Background(), dir, sessions.Options{})
			must(t, err)
			defer src.Close()

			opts := verify.Options{Store: st, Sessions: []sessions.Source{src}}
			whole := run(t, opts)
			if got := keysOf(whole.Corrupt); !slices.Equal(got, sortedCopy(corrupt)) {
				t.Fatalf("whole store: corrupt %v, want %v", got, corrupt)
			}
			wholeDangling := danglingOf(whole)
			if len(wholeDangling) == 0 || whole.Sessions.Orphans == 0 {
				t.Fatalf("whole store: %d dangling, %d orphans: the fixture tells nothing", len(wholeDangling), whole.Sessions.Orphans)
			}
			for _, n := range []int{2, 3, 7, 16} {
				checked := map[string]int{}
				var corruptKeys, dangling []string
				var blobs, orphans int64
				for i := range n {
					o := opts
					o.Shard = shard.Spec{K: i, N: n}
					o.OnResult = func(r verify.Result) { checked[r.Key]++ }
					rep := run(t, o)
					if rep.Shard != o.Shard.String() {
						t.Errorf("report of %s says shard %q", o.Shard, rep.Shard)
					}
					blobs += rep.Blobs
					orphans += rep.Sessions.Orphans
					corruptKeys = append(corruptKeys, keysOf(rep.Corrupt)...)
					dangling = append(dangling, danglingOf(rep)...)
				}
				for key, c := range checked {
					if c != 1 {
						t.Errorf("N=%d: %s checked %d times", n, key, c)
					}
				}
				if len(checked) != int(whole.Selected) || blobs != whole.Blobs || orphans != whole.Sessions.Orphans {
					t.Errorf("N=%d: %d checked, %d blobs, %d orphans; whole store %d, %d, %d", n, len(checked), blobs, orphans, whole.Selected, whole.Blobs, whole.Sessions.Orphans)
				}
				slices.Sort(corruptKeys)
				slices.Sort(dangling)
				if !slices.Equal(corruptKeys, keysOf(whole.Corrupt)) || !slices.Equal(dangling, wholeDangling) {
					t.Errorf("N=%d: corrupt %v dangling %v; whole store %v %v", n, corruptKeys, dangling, keysOf(whole.Corrupt), wholeDangling)
				}
			}
		})
	}
}

func danglingOf(rep *verify.Report) []string {
	var out []string
	for _, f := range rep.Sessions.Scan.Dangling {
		out = append(out, f.Key)
	}
	slices.Sort(out)
	return out
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// On a file:// bucket, whose key-order listing sorts each folder's names and
// drops another shard's before holding them, the shards still check every
// blob exactly once.
func TestShardsVerifyFileBucketOnce(t *testing.T) {
	st, err := store.Open(context.Background(), "file://"+filepath.ToSlash(t.TempDir()))
	must(t, err)
	defer st.Close()
	corrupt := corruptStore(t, st, 40)
	for i := range 20 {
		put(t, st, fmt.Sprintf("uploads/user %d/photo %d.jpg", i%3, i), []byte(fmt.Sprint("photo ", i)))
	}
	var listed []string
	must(t, st.List(context.Background(), "", func(e store.Entry) error { listed = append(listed, e.Key); return nil }))
	for _, n := range []int{1, 3, 7} {
		checked := map[string]int{}
		var corruptKeys []string
		for k := range n {
			rep := run(t, verify.Options{Store: st, Shard: shard.Spec{K: k, N: n}, OnResult: func(r verify.Result) { checked[r.Key]++ }})
			corruptKeys = append(corruptKeys, keysOf(rep.Corrupt)...)
		}
		for _, key := range listed {
			if checked[key] != 1 {
				t.Errorf("N=%d: %s checked %d times", n, key, checked[key])
			}
		}
		if len(checked) != len(listed) {
			t.Errorf("N=%d: %d keys checked, %d listed", n, len(checked), len(listed))
		}
		if slices.Sort(corruptKeys); !slices.Equal(corruptKeys, sortedCopy(corrupt)) {
			t.Errorf("N=%d: corrupt %v, want %v", n, corruptKeys, corrupt)
		}
	}
}
