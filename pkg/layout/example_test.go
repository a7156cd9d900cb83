package layout_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/layout"
	"github.com/mediactl/mediactl/pkg/ref"
)

// A coffer home after coffer's upgrade: the files moved to content/, the rows
// still name channel-media/ and "~/.coffer/…".
func ExampleFind() {
	home, _ := os.MkdirTemp("", "home")
	defer os.RemoveAll(home)
	dot := filepath.Join(home, ".coffer")
	os.MkdirAll(filepath.Join(dot, "content", "channel-media"), 0o755)
	os.MkdirAll(filepath.Join(dot, "content", "chat-media"), 0o755)
	os.WriteFile(filepath.Join(dot, "content", "chat-media", "9f3a.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(dot, "content", "chat-media", "9f3a.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dot, "runs.db"), nil, 0o644)

	l, err := layout.Find(layout.Coffer, dot)
	if err != nil {
		fmt.Println(err)
		return
	}
	rel := func(p string) string { r, _ := filepath.Rel(home, p); return r }
	for _, s := range l.Stores {
		fmt.Println("store", rel(s.Dir))
	}
	channel := l.Resolver(l.Stores[0].Dir)
	for _, p := range []string{dot + "/channel-media/b0f2.jpg", "~/.coffer/channel-media/b0f2.jpg", dot + "/coffer.db"} {
		st, key := channel.Resolve(ref.Reference{Kind: ref.AbsPath, Path: p})
		if p[0] == '~' {
			st, key = channel.Resolve(ref.Reference{Kind: ref.RelPath, Path: p})
		}
		fmt.Printf("%s %q\n", st, key)
	}
	fmt.Println(l.Companion("9f3a.json"))
	// Output:
	// store .coffer/content/channel-media
	// store .coffer/content/chat-media
	// inside "b0f2.jpg"
	// inside "b0f2.jpg"
	// outside ""
	// 9f3a.png true
}
