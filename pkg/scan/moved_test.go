package scan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// A folder half moved to a new place, with the references still naming the
// old one: each reference is inside both stores, and names the file wherever
// it is; only a file gone from both places is dangling.
func TestReferenceInsideTwoStoresFindsTheMovedFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	old, moved := filepath.Join(root, "channel-media"), filepath.Join(root, "content", "channel-media")
	sess := filepath.Join(root, "sessions")
	for _, d := range []string{old, moved, sess} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(old, "stayed.jpg"), []byte("a"), 0o644))
	must(t, os.WriteFile(filepath.Join(moved, "moved.jpg"), []byte("b"), 0o644))
	body := `{"blocks": [`
	for i, n := range []string{"stayed.jpg", "moved.jpg", "gone.jpg", "moved.jpg", "gone.jpg", `C:\\Users\\x.png`} {
		if i > 0 {
			body += ", "
		}
		body += fmt.Sprintf(`{"type": "attachment", "path": "%s/%s"}`, old, n)
	}
	body += `, {"path": "C:\\Users\\me\\x.png"}]}`
	must(t, os.WriteFile(filepath.Join(sess, "c.json"), []byte(body), 0o644))

	var targets []scan.Target
	for _, r := range []struct {
		dir     string
		aliases []string
	}{{old, nil}, {moved, []string{old}}} {
		st, err := store.Open(ctx, r.dir)
		must(t, err)
		defer st.Close()
		targets = append(targets, scan.Target{Store: st, Resolver: ref.NewLocal(ref.Local{Dir: r.dir, Aliases: r.aliases})})
	}
	src, err := sessions.Open(ctx, sess, sessions.Options{})
	must(t, err)
	defer src.Close()
	where := map[string]string{}
	rep, err := scan.Run(ctx, scan.Options{Sources: []sessions.Source{src}, Stores: targets, Jobs: 1, OnReference: func(f scan.Found) {
		if f.Status == ref.Inside {
			where[f.Key] = f.Store
		}
	}})
	must(t, err)
	if !rep.Complete {
		t.Fatalf("incomplete: %v", rep.Problems)
	}
	if where["stayed.jpg"] != old || where["moved.jpg"] != moved || where["gone.jpg"] != old {
		t.Errorf("resolved to %v", where)
	}
	if rep.DanglingBlobs != 1 || rep.DanglingReferences != 2 || len(rep.Dangling) != 2 || rep.Dangling[0].Key != "gone.jpg" {
		t.Errorf("dangling: %d blobs, %d references: %+v", rep.DanglingBlobs, rep.DanglingReferences, rep.Dangling)
	}
	// The Windows paths are no reference of a local store (the extractor
	// does not report them): five inside references and nothing else.
	if rep.ByStatus["inside"] != 5 || len(rep.ByStatus) != 1 {
		t.Errorf("a Windows path was taken for a reference: %v", rep.ByStatus)
	}
}
