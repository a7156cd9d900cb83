package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/sessions"
)

// Walk a forge session folder: documents in lexical order, the ".tmp" of an
// atomic write read as a leftover (it may be the only copy of a session), and
// a file that is not a session reported as unread.
func Example() {
	dir, err := os.MkdirTemp("", "sessions-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for name, content := range map[string]string{
		"t-1.json":     `{"task_id":"t-1","messages":[]}`,
		"t-2.json":     `{"task_id":"t-2","messages":[]}`,
		"t-3.json.tmp": `{"task_id":"t-3","mess`, // forge crashed before the rename
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
		var unread *sessions.UnreadError
		if errors.As(it.Err, &unread) {
			fmt.Printf("%s: not read: %s\n", name, unread.Reason)
			return nil
		}
		if it.Err != nil {
			return it.Err
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
		what := ""
		if it.Leftover {
			what = ", leftover"
		}
		fmt.Printf("%s (%d bytes%s): %s\n", name, it.Size, what, b)
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d documents, %d leftovers, %d unread\n", counts.Documents, counts.Leftovers, counts.Unread)
	// Output:
	// notes.txt: not read: not a session document (by its name)
	// t-1.json (31 bytes): {"task_id":"t-1","messages":[]}
	// t-2.json (31 bytes): {"task_id":"t-2","messages":[]}
	// t-3.json.tmp (22 bytes, leftover): {"task_id":"t-3","mess
	// 2 documents, 1 leftovers, 1 unread
}
