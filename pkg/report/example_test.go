package report_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/report"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/target"
)

// Two users upload the same photo; one of them also keeps a scan of their
// own. The photo is shared, the scan is the second user's alone.
func Example() {
	dir, _ := os.MkdirTemp("", "report-example")
	defer os.RemoveAll(dir)
	blobs, sessions := filepath.Join(dir, "blobs"), filepath.Join(dir, "sessions")
	os.MkdirAll(blobs, 0o755)
	os.MkdirAll(sessions, 0o755)
	put := func(content string) string {
		sum := sha256.Sum256([]byte(content))
		name := hex.EncodeToString(sum[:]) + ".png"
		os.WriteFile(filepath.Join(blobs, name), []byte(content), 0o644)
		return filepath.Join(blobs, name)
	}
	photo, scanned := put("the same photo"), put("a scan of a receipt")
	os.WriteFile(filepath.Join(sessions, "a.json"), []byte(`{"user": "ann", "file": "`+photo+`"}`), 0o644)
	os.WriteFile(filepath.Join(sessions, "b.json"), []byte(`{"user": "bob", "files": ["`+photo+`", "`+scanned+`"]}`), 0o644)

	ctx := context.Background()
	tg, err := target.Open(ctx, target.Spec{Stores: []string{blobs}, Sessions: []string{sessions}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tg.Close()
	rep, err := report.Run(ctx, report.Options{
		Stores:  []scan.Target{{Store: tg.Stores[0]}},
		Sources: tg.Sources,
		Owners:  owner.Rule{Pointer: "/user"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range rep.Owners {
		fmt.Printf("%s: %d blobs (%d bytes), %d bytes only theirs\n", o.ID, o.Referenced.Blobs, o.Referenced.Bytes, o.Exclusive.Bytes)
	}
	fmt.Printf("shared: %d blobs (%d bytes); outcome %s\n", rep.Totals.Shared.Blobs, rep.Totals.Shared.Bytes, rep.Outcome())
	// Output:
	// bob: 2 blobs (33 bytes), 19 bytes only theirs
	// ann: 1 blobs (14 bytes), 0 bytes only theirs
	// shared: 1 blobs (14 bytes); outcome ok
}
