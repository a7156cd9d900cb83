package replay_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mediactl/mediactl/pkg/replay"
	"github.com/mediactl/mediactl/pkg/store"
)

var ctx = context.Background()

// pngBlob returns n bytes that start as a PNG does and are random after.
func pngBlob(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

func sum(b []byte) string { d := sha256.Sum256(b); return hex.EncodeToString(d[:]) }

// forgeFiles writes blobs into <work>/.forge/files/inbound as forge does
// (content-addressed names, dirs 0700, files 0600) and returns the files dir
// and each blob's absolute path.
func forgeFiles(t testing.TB, work string, blobs ...[]byte) (string, []string) {
	t.Helper()
	files := filepath.Join(work, ".forge", "files")
	inbound := filepath.Join(files, "inbound")
	if err := os.MkdirAll(inbound, 0o700); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, b := range blobs {
		p := filepath.Join(inbound, sum(b)+".png")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return files, paths
}

func newReplayer(t testing.TB, cfg replay.Config) *replay.Replayer {
	t.Helper()
	r, err := replay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readRef opens ref and reads it to the end.
func readRef(t testing.TB, r *replay.Replayer, ref string, vars ...replay.Vars) ([]byte, replay.Info, error) {
	t.Helper()
	rc, info, err := r.Open(ctx, ref, vars...)
	if err != nil {
		return nil, info, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, info, err
}

// wantBytes fails unless ref reads back as want, verified.
func wantBytes(t testing.TB, r *replay.Replayer, ref string, want []byte, vars ...replay.Vars) replay.Info {
	t.Helper()
	got, info, err := readRef(t, r, ref, vars...)
	if err != nil {
		t.Fatalf("Open(%q): %v", ref, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Open(%q) read %d bytes, not the %d of the blob", ref, len(got), len(want))
	}
	if !info.Verified || info.SHA256 != sum(want) {
		t.Errorf("Open(%q) info = %+v, want verified against %s", ref, info, sum(want))
	}
	return info
}

// wantRefused fails unless err is a *RefusedError for ref wrapping sentinel.
func wantRefused(t testing.TB, ref string, err, sentinel error) {
	t.Helper()
	var re *replay.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, sentinel) {
		t.Errorf("Open(%q) = %v, want a *RefusedError wrapping %v", ref, err, sentinel)
		return
	}
	if re.Ref != ref || re.Reason == "" {
		t.Errorf("Open(%q): RefusedError{Ref: %q, Reason: %q}", ref, re.Ref, re.Reason)
	}
}

// wantMismatch fails unless reading ref ends in ErrDigestMismatch.
func wantMismatch(t testing.TB, r *replay.Replayer, ref string, vars ...replay.Vars) {
	t.Helper()
	_, _, err := readRef(t, r, ref, vars...)
	var me *replay.MismatchError
	if !errors.Is(err, replay.ErrDigestMismatch) || !errors.As(err, &me) {
		t.Errorf("reading %q = %v, want an error wrapping ErrDigestMismatch", ref, err)
	}
}

// putObject writes an object as migrate does: content type and the sha256 of
// meta in the metadata (meta is data for an honest copy).
func putObject(t testing.TB, s store.Store, key string, data, meta []byte) {
	t.Helper()
	opts := store.PutOptions{ContentType: "image/png", Metadata: map[string]string{replay.MetadataKey: sum(meta)}}
	if meta == nil {
		opts.Metadata = nil
	}
	if err := s.Put(ctx, key, bytes.NewReader(data), opts); err != nil {
		t.Fatal(err)
	}
}
