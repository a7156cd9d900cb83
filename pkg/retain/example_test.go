package retain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// The retention rule: a blob whose digest appears anywhere, even in prose,
// is kept; a human name is kept by its words, whatever escapes stand between
// them.
func ExampleIndex() {
	x := retain.NewIndex()
	used := x.Add("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png")
	unused := x.Add("4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg")
	upload := x.Add("agent-inputs/u1/t1/uploads/Bob's März photo.png")
	x.Mark([]byte("the tool printed sha256 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"))
	x.Mark([]byte(`<a href="/view?f=Bob%26%2339%3Bs+M%C3%A4rz+photo.png">`))
	fmt.Println(x.Referenced(used), x.Referenced(unused), x.Referenced(upload))
	// Output: true false true
}

// Ages are written as operators write them, with days and weeks; FormatAge
// writes them back the same way.
func ExampleParseAge() {
	for _, s := range []string{"30d", "2w", "1d12h", "90m"} {
		d, err := retain.ParseAge(s)
		fmt.Println(s, d, retain.FormatAge(d), err)
	}
	_, err := retain.ParseAge("-1d")
	fmt.Println(err)
	// Output:
	// 30d 720h0m0s 30d <nil>
	// 2w 336h0m0s 14d <nil>
	// 1d12h 36h0m0s 36h <nil>
	// 90m 1h30m0s 90m <nil>
	// bad duration "-1d"
}

// Mark a store against a folder of sessions: a session names the photo by
// its words, with its spaces escaped in a URL, and nothing names the old
// draft. The draft may go once it is older than the fence; a blob written
// just now is kept whatever names it.
func ExampleMark() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "retain-example")
	defer os.RemoveAll(root)
	files, sess := filepath.Join(root, "files"), filepath.Join(root, "sessions")
	os.MkdirAll(files, 0o700)
	os.MkdirAll(sess, 0o700)
	old := time.Now().Add(-72 * time.Hour)
	for _, key := range []string{"Bob's photo.png", "draft.txt"} {
		p := filepath.Join(files, key)
		os.WriteFile(p, []byte(key), 0o600)
		os.Chtimes(p, old, old)
	}
	os.WriteFile(filepath.Join(files, "new.png"), []byte("new"), 0o600)
	os.WriteFile(filepath.Join(sess, "t-1.json"), []byte(`{"text":"see http://localhost/files/Bob%27s%20photo.png"}`), 0o600)

	st, _ := store.Open(ctx, files)
	defer st.Close()
	src, _ := sessions.Open(ctx, sess, sessions.Options{})
	defer src.Close()
	r, err := retain.Mark(ctx, st, []sessions.Source{src}, retain.MarkOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d blobs, %d kept by the rule, complete %v\n", r.Blobs, r.Kept, r.Complete)
	cutoff := r.Started.Add(-retain.DefaultMinAge)
	for _, key := range []string{"Bob's photo.png", "draft.txt", "new.png"} {
		why := r.Keeps(key, cutoff)
		if why == "" {
			why = "may go"
		}
		fmt.Printf("%s: %s\n", key, why)
	}
	// Output:
	// 3 blobs, 1 kept by the rule, complete true
	// Bob's photo.png: referenced by the retention rule
	// draft.txt: may go
	// new.png: younger than the minimum age
}
