package verify_test

import (
	"context"
	"fmt"
	"os"

	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/verify"
)

// Verify the blobs of the example forge store shipped with mediactl.
func Example() {
	ctx := context.Background()
	st, err := store.Open(ctx, "../../examples/forge/.forge/files/inbound")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer st.Close()
	rep, err := verify.Run(ctx, verify.Options{Store: st})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Printf("%d blobs: %d ok, %d corrupt\n", rep.Blobs, rep.Counts[verify.OK], rep.Counts[verify.Corrupt])
	// Output: 4 blobs: 4 ok, 0 corrupt
}
