package replay

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCacheLargeEntryChangedWhileRead: an entry too large for memory, hashed
// and found right, then altered in place before it is read, fails at its end
// instead of passing the altered bytes off as the blob.
func TestCacheLargeEntryChangedWhileRead(t *testing.T) {
	c, err := openCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	data := make([]byte, inMemory+1)
	rand.Read(data)
	want := sha256.Sum256(data)
	p := filepath.Join(c.dir, hex.EncodeToString(want[:]))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rc, size, _, ok := c.open(want)
	if !ok || size != int64(len(data)) {
		t.Fatalf("open of a right entry: ok %v, size %d", ok, size)
	}
	defer rc.Close()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("altered"), int64(len(data)/2))
	f.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("reading an entry altered after its check = %v, want ErrDigestMismatch", err)
	}
}
