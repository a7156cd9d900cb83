package gc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// Plan which blobs of a forge work directory no session refers to, then
// look at the candidates. Nothing is removed until Execute.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "gc-example")
	defer os.RemoveAll(root)
	inbound, sess := filepath.Join(root, "inbound"), filepath.Join(root, "sessions")
	os.MkdirAll(inbound, 0o700)
	os.MkdirAll(sess, 0o700)
	old := time.Now().Add(-72 * time.Hour)
	for _, content := range []string{"used", "orphan"} {
		p := filepath.Join(inbound, name(content))
		os.WriteFile(p, []byte(content), 0o600)
		os.Chtimes(p, old, old)
	}
	os.WriteFile(filepath.Join(sess, "t-1.json"), []byte(`{"messages":[{"parts":[{"media":{"uri":"`+filepath.Join(inbound, name("used"))+`"}}]}]}`), 0o600)

	st, _ := store.Open(ctx, inbound)
	defer st.Close()
	src, _ := sessions.Open(ctx, sess, sessions.Options{})
	defer src.Close()
	p, err := gc.MakePlan(ctx, gc.Options{Store: st, Sessions: []sessions.Source{src}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d blobs, %d referenced, %d candidates\n", p.Blobs, p.Referenced, p.Candidates.Len())
	for c := range p.Candidates.All() {
		fmt.Println(c.Key == name("orphan"), c.Size, c.Referenced)
	}
	fmt.Println(p.Check(gc.Guards{MaxDeletePercent: 50}))
	// Output:
	// 2 blobs, 1 referenced, 1 candidates
	// true 6 false
	// <nil>
}
