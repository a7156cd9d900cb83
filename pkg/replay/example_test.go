package replay_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/replay"
)

// A runtime's rehydrate step: each media part of a session names its bytes by
// a local path, a file:// URI or a bucket URL; the Replayer reads it only
// where the runtime allows and hands over the bytes once they are proven.
func Example() {
	// What forge keeps in <workdir>/.forge/files/inbound, and the bucket
	// `mediactl migrate` copied it to (here a file:// bucket).
	work, _ := os.MkdirTemp("", "replay-example")
	defer os.RemoveAll(work)
	files := filepath.Join(work, ".forge", "files")
	os.MkdirAll(filepath.Join(files, "inbound"), 0o700)
	img := []byte("\x89PNG\r\n\x1a\n a cat")
	d := sha256.Sum256(img)
	name := hex.EncodeToString(d[:]) + ".png"
	os.WriteFile(filepath.Join(files, "inbound", name), img, 0o600)
	bucket := filepath.Join(work, "bucket")
	os.MkdirAll(filepath.Join(bucket, "inbound"), 0o700)
	os.WriteFile(filepath.Join(bucket, "inbound", name), img, 0o600)

	r, err := replay.New(replay.Config{
		Roots:   []string{files},
		Buckets: []replay.Bucket{{URL: "file://" + bucket, Prefixes: []string{"inbound/"}}},
		Cache:   filepath.Join(work, "cache"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	rehydrate := func(uri string) ([]byte, error) {
		rc, info, err := r.Open(context.Background(), uri)
		if err != nil {
			return nil, err // refused: outside the roots, another bucket, …
		}
		defer rc.Close()
		b, err := io.ReadAll(rc) // an error at the end if the bytes are not the blob's
		if err != nil {
			return nil, err
		}
		fmt.Printf("%d bytes of %s from %s\n", len(b), info.ContentType, info.Source)
		return b, nil
	}
	for _, uri := range []string{
		filepath.Join(files, "inbound", name),   // as the session was written
		"file://" + bucket + "/inbound/" + name, // as migrate --rewrite left it
		"file://" + bucket + "/inbound/" + name, // again: from the cache
		"/etc/passwd",
	} {
		if _, err := rehydrate(uri); err != nil {
			fmt.Println("refused:", filepath.Base(uri))
		}
	}
	// Output:
	// 14 bytes of image/png from local
	// 14 bytes of image/png from bucket
	// 14 bytes of image/png from cache
	// refused: passwd
}
