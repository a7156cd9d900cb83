package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/store"
)

// benchBlobs writes n small blobs spread over 16 folders of a new store and
// returns their keys with their descriptions: what a gc sweep moves.
func benchBlobs(b *testing.B, n int) (*store.LocalStore, string, []store.InternalMove) {
	b.Helper()
	dir := b.TempDir()
	st, err := store.OpenLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	moves := make([]store.InternalMove, n)
	old := time.Now().Add(-1000 * time.Hour)
	for i := range moves {
		key := fmt.Sprintf("%02x/blob-%08d.png", i%16, i)
		p := filepath.Join(dir, filepath.FromSlash(key))
		if i < 16 {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
		moves[i] = store.InternalMove{Key: key, Name: "trash/RUN/" + key, Size: 1, ModTime: old}
	}
	return st, dir, moves
}

// BenchmarkMoveManyToInternal is gc's sweep into the trash: ns/op is per blob.
func BenchmarkMoveManyToInternal(b *testing.B) {
	st, _, moves := benchBlobs(b, b.N)
	ctx := context.Background()
	b.ResetTimer()
	for start := 0; start < len(moves); start += 65536 {
		for _, err := range st.MoveManyToInternal(ctx, moves[start:min(start+65536, len(moves))]) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkMoveFromInternal is gc restore: ns/op is per blob.
func BenchmarkMoveFromInternal(b *testing.B) {
	st, _, moves := benchBlobs(b, b.N)
	ctx := context.Background()
	for _, err := range st.MoveManyToInternal(ctx, moves) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for _, m := range moves {
		if err := st.MoveFromInternal(ctx, m.Name, m.Key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeleteInternal is gc purge: ns/op is per blob.
func BenchmarkDeleteInternal(b *testing.B) {
	st, _, moves := benchBlobs(b, b.N)
	ctx := context.Background()
	for _, err := range st.MoveManyToInternal(ctx, moves) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for _, m := range moves {
		if err := st.DeleteInternal(ctx, m.Name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMoveTo is a move into another store on the same file system (gc
// --trash-dir, verify --quarantine): ns/op is per blob.
func BenchmarkMoveTo(b *testing.B) {
	st, _, moves := benchBlobs(b, b.N)
	dst, err := store.OpenLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	ctx := context.Background()
	b.ResetTimer()
	for _, m := range moves {
		if err := st.MoveTo(ctx, m.Key, dst, "RUN/"+m.Key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListLargeFolder lists a folder of 20,000 blobs in key order, all of
// it and, as one shard of 16 does, only the keys of one part: B/op is what
// the sorted listing allocates, most of it the names it holds while it sorts.
func BenchmarkListLargeFolder(b *testing.B) {
	dir := b.TempDir()
	const n = 20000
	for i := range n {
		name := fmt.Sprintf("%x.png", sha256.Sum256(fmt.Append(nil, i)))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	st, err := store.OpenLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	oneOf16 := func(key string) bool { return key[0] == '0' }
	for _, c := range []struct {
		name string
		keep func(string) bool
	}{{"all", nil}, {"one-of-16", oneOf16}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				listed := 0
				count := func(store.Entry) error { listed++; return nil }
				if c.keep == nil {
					err = st.List(ctx, "", count)
				} else {
					err = st.ListSelected(ctx, "", c.keep, count)
				}
				if err != nil || c.keep == nil && listed != n || listed == 0 || c.keep != nil && listed > n/8 {
					b.Fatalf("%v, %d listed", err, listed)
				}
			}
		})
	}
}
