package scan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// Scan the example forge work directory shipped with mediactl: every
// reference resolves, so nothing is dangling.
func Example() {
	ctx := context.Background()
	root, _ := filepath.Abs("../../examples/forge")
	st, err := store.Open(ctx, filepath.Join(root, ".forge", "files", "inbound"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer st.Close()
	src, err := sessions.Open(ctx, filepath.Join(root, ".forge", "sessions"), sessions.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer src.Close()
	rep, err := scan.Run(ctx, scan.Options{
		Sources: []sessions.Source{src},
		Stores:  []scan.Target{{Store: st, Resolver: scan.NewResolver(st, []string{root})}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Printf("%d references to %d blobs, %d dangling, complete: %v\n",
		rep.References, rep.DistinctBlobs, rep.DanglingReferences, rep.Complete)
	// Output: 4 references to 3 blobs, 0 dangling, complete: true
}
