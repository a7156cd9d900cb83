package sessions_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/sessions"
)

// Walk a forge session folder: documents in lexical order, the stale ".tmp" of an
// atomic write counted as skipped.
func Example() {
	dir, err := os.MkdirTemp("", "sessions-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for name, content := range map[string]string{
		"t-1.json":     `{"task_id":"t-1","messages":[]}`,
		"t-2.json":     `{"task_id":"t-2","messages":[]}`,
		"t-2.json.tmp": `{"task_id":"t-2","mess`,
		"notes.txt":    `not a session`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			panic(err)
		}
	}

	ctx := context.Background()
	src, err := sessions.Open(ctx, dir, sessions.Options{})
	if err != nil {
		panic(err)
	}
	defer src.Close()
	counts, err := src.Walk(ctx, func(it sessions.Item) error {
		name, _ := filepath.Rel(dir, it.Place.Document)
		if it.Err != nil {
			fmt.Printf("%s: %v\n", name, it.Err)
			return nil
		}
		r, err := it.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		fmt.Printf("%s (%d bytes): %s\n", name, it.Size, b)
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d documents, %d skipped\n", counts.Documents, counts.Skipped)
	// Output:
	// t-1.json (31 bytes): {"task_id":"t-1","messages":[]}
	// t-2.json (31 bytes): {"task_id":"t-2","messages":[]}
	// 2 documents, 1 skipped
}
