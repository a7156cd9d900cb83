package store

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// dirEntries.compare orders a directory's entries as their keys sort, a
// directory's key with "/" after it; it must agree with comparing those
// strings, for names that are prefixes of each other, hold bytes on both
// sides of "/", and are alike in their first 8 bytes or not.
func TestDirEntriesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "-", ".", "/", "0", "é", "~"}
	name := func() string {
		var b strings.Builder
		// Names longer than the 8 bytes compare first stores, with those
		// bytes alike, and names of exactly 7, 8 and 9 bytes.
		b.WriteString([]string{"", "", "abcdefg", "abcdefgh", "abcdefghi"}[r.IntN(5)])
		for range 1 + r.IntN(4) { // a directory entry has a name
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	sortKey := func(k string, dir bool) string {
		if dir {
			return k + "/"
		}
		return k
	}
	var d dirEntries
	for range 50000 {
		ka, kb := name(), name()
		dir := func() bool { return r.IntN(2) == 0 }
		// Half the time the key differs from the name on disk, as fileblob's
		// unescaping makes it.
		disk := func(k string) string {
			if r.IntN(2) == 0 {
				return "__0x" + k
			}
			return k
		}
		d.items = d.items[:0]
		for _, k := range []string{ka, kb} {
			if err := d.add(disk(k), k, dir()); err != nil {
				t.Fatal(err)
			}
		}
		a, b := d.items[0], d.items[1]
		if string(d.key(a)) != ka || string(d.key(b)) != kb {
			t.Fatalf("keys %q %q, want %q %q", d.key(a), d.key(b), ka, kb)
		}
		want := strings.Compare(sortKey(ka, a.dir), sortKey(kb, b.dir))
		if got := d.compare(a, b); got != want {
			t.Fatalf("compare(%q dir=%v, %q dir=%v) = %d, want %d", ka, a.dir, kb, b.dir, got, want)
		}
	}
}
