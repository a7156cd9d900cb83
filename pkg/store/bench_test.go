package store_test

import (
	"context"
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
