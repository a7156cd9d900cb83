package target_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/target"
)

// A forge work directory is found by itself; a store that holds the sessions
// is refused before anything is read.
func ExampleOpen() {
	work, _ := os.MkdirTemp("", "work")
	defer os.RemoveAll(work)
	os.MkdirAll(filepath.Join(work, ".forge", "files", "inbound"), 0o755)
	os.MkdirAll(filepath.Join(work, ".forge", "sessions"), 0o755)
	rel := func(p string) string { r, _ := filepath.Rel(work, p); return r }

	t, err := target.Open(context.Background(), target.Spec{Root: work})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Layout.Name, "detected:", t.Detected)
	fmt.Println("store", rel(t.StoreSpecs[0]), "sessions", rel(t.SessionSpecs[0]))
	t.Close()

	_, err = target.Open(context.Background(), target.Spec{
		Stores:   []string{filepath.Join(work, ".forge")},
		Sessions: []string{filepath.Join(work, ".forge", "sessions")},
	})
	var overlap *target.OverlapError
	if errors.As(err, &overlap) {
		fmt.Println("refused: the sessions are", overlap.Relation, "the store", rel(overlap.Store))
	}
	// Output:
	// forge detected: true
	// store .forge/files/inbound sessions .forge/sessions
	// refused: the sessions are inside the store .forge
}
