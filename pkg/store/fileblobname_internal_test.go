package store

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gocloud.dev/blob/fileblob"
)

// TestFileblobPathIsFileblobs: for every key fileblob writes, fileblobPath
// names the very file fileblob wrote it to (so a file:// bucket's reads,
// which open that file themselves, read what fileblob would), and every key
// fileblob refuses, fileblobPath refuses too. The keys are the awkward ones —
// control characters, what reads as an escape or nearly, "../" and "//",
// a trailing "/", non-ASCII, not UTF-8 — and 1,500 random ones
// spelled from the characters the escaping turns on.
func TestFileblobPathIsFileblobs(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	keys := []string{
		"a.png", "u/t/uploads/f.png", "tab\there.png", "dir\twith/a tab.png", "ctl\x01\x1f/z",
		"a__0x41__.png", "__0x2f/x", "x__0x1/y", "x__0x1_/y", "a__0x41_/b", "_0x41__", "__0x41_",
		"__0x", "__0x__", "a/__0x/b", "__0x7fffffff__", "__0xffffffffff__", "p__0x41__/q__0x9__/r",
		"a../b", "..a/b..", "a..", "../a", "a/../b", "a//b", "a/", "/a", "./a", "a/.", "a/..",
		"x.attrs", "x.attrs/y", "☺/☺", "sp ace/\u00e9", "w_/_x", "_/_/_", "\xff.png",
		InternalDir + "/trash/RUN/a\tb.png",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "a_0x1f9/.\t_"
	for range 1500 {
		var k strings.Builder
		for range 1 + rng.IntN(14) {
			k.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		keys = append(keys, k.String())
	}
	checked := 0
	for i, key := range keys {
		// A bucket of its own for each key: "a" and then "a/b" in one would
		// fail for want of a folder, not because fileblob refuses "a/b".
		dir := filepath.Join(base, strconv.Itoa(i))
		b, err := fileblob.OpenBucket(dir, &fileblob.Options{CreateDir: true, NoTempDir: true})
		if err != nil {
			t.Fatal(err)
		}
		content := []byte("content of " + key)
		werr := b.WriteAll(ctx, key, content, nil)
		b.Close()
		p, perr := fileblobPath(key)
		switch {
		case werr != nil && perr == nil:
			t.Errorf("fileblob refuses %q (%v); fileblobPath names %q", key, werr, p)
			continue
		case werr != nil:
			continue
		case perr != nil:
			t.Errorf("fileblob writes %q; fileblobPath refuses it: %v", key, perr)
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || string(got) != string(content) {
			t.Errorf("key %q: fileblobPath says %q, which holds %q, %v", key, p, got, err)
			continue
		}
		checked++
	}
	if checked < 700 {
		t.Errorf("only %d keys written and checked", checked)
	}
}
