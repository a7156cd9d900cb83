package retain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

func digest(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

func TestIndexRetentionRule(t *testing.T) {
	a := digest("a")
	x := NewIndex()
	ids := map[string]int{}
	for _, k := range []string{
		a + ".png",                             // content-addressed
		"4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg", // coffer, opaque
		"u/t/uploads/f.png",                    // bucket key: matched by base name
		"noext",                                // opaque, no extension
		"my photo.jpg",                         // not a single token
		digest("never") + ".pdf",               // not mentioned anywhere
		"u/t/uploads/unrelated-" + a[:10] + ".gif", // shares a digest prefix only
		"IMG_" + a[20:40] + ".HEIC",                // a hex part of 20 digits
		"Bob's März notes.pdf",                     // words: bob s m rz notes (NFC)
		"1234567890.jpg",                           // a number: its stem
		"第二版.pdf",                                  // no letter or digit in the stem
		"report.final.pdf",                         // stem: report.final
	} {
		ids[k] = x.Add(k)
	}
	for _, s := range []string{
		"sha256:" + strings.ToUpper(a) + " was uploaded", // bare digest, other case
		`{"path":"/home/u/.coffer/channel-media/4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8"}`,
		"see agent-inputs/u/t/uploads/f.png.",
		"the file noext is here",
		"open 'my photo.jpg' please",
		"thumb-" + strings.ToUpper(a[20:40]) + "-small", // the hex part, glued, upper case
		"Bob&#x27;s M&auml;rz notes",                    // entities between the words
		`{"media_id": 1234567890.0}`,                    // its words: 1234567890, 0
		"report\\u002efinal",                            // an escape between
	} {
		x.Mark([]byte(s))
	}
	want := map[string]bool{
		a + ".png":                             true,
		"4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg": true,
		"u/t/uploads/f.png":                    true,
		"noext":                                true,
		"my photo.jpg":                         true,
		digest("never") + ".pdf":               false,
		"u/t/uploads/unrelated-" + a[:10] + ".gif": false,
		"IMG_" + a[20:40] + ".HEIC":                true,
		"Bob's März notes.pdf":                     true,
		"1234567890.jpg":                           true,
		"第二版.pdf":                                  true,
		"report.final.pdf":                         true,
	}
	for k, w := range want {
		if got := x.Referenced(ids[k]); got != w {
			t.Errorf("%s: referenced = %v, want %v", k, got, w)
		}
	}
}

// TestIndexDigestInALongerRun: a digest inside a longer run of hex digits
// keeps its blob. A binary value glues a string's length byte to it: SQLite's
// JSONB and msgpack write "<digest>.png", 68 bytes, after the byte 0x44, 'D'.
// A run that only looks like a digest keeps nothing.
func TestIndexDigestInALongerRun(t *testing.T) {
	a := digest("a")
	x := NewIndex()
	id := x.Add(a)
	x.Mark([]byte(a[1:] + "0" + a[:1]))
	if x.Referenced(id) {
		t.Fatal("a 65-character hex run without the digest matched it")
	}
	x.Mark([]byte("\xc7D" + a + ".pngG"))
	if !x.Referenced(id) {
		t.Fatal("a digest after a JSONB length byte 'D' was not matched")
	}
	x = NewIndex()
	id = x.Add(a)
	x.Mark([]byte("x" + a + ".bin"))
	if !x.Referenced(id) {
		t.Fatal("digest inside a token not matched")
	}
}

// indexPools are small, so that random keys and strings collide often: the
// same digest under two folders or extensions, a name that is another blob's
// stem, digests in either case, names with spaces.
var (
	poolDirs   = []string{"", "a/", "u/t/uploads/", "x//y/", "./"}
	poolExts   = []string{"", ".png", ".jpg", ".abc", ".tar", ".PNG", ".toolongext", "."}
	poolOpaque = []string{"f.png", "noext", "my photo.jpg", ".hidden", "a.b.c", "a.b", "f", "photo.png", "ünï.png", "4f1c2a7e.jpg", "x.png.", "a..b",
		"März.pdf", "Ma\u0308rz.pdf", "0123456789abcdef0.v2 (Bob's)", "0123456789ABCDEF0", "写真.jpg", "12345.jpg", "Bob's photo.JPG"}
	poolSeps = []string{" ", "/", ".", "..", `"`, "0", "x", "é", "-", "_", "\n", "sha256:", "%27", "&#39;", "\\x27", "+", "\\u00e4", "\xc4D", "1.5e1", "12345.0", "1.234567890123456e15", "-"}
)

func poolDigest(i int) string { return digest(fmt.Sprint("blob", i%6)) }

func randomKey(r *rand.Rand) string {
	var k string
	switch r.IntN(4) {
	case 0:
		k = poolDirs[r.IntN(len(poolDirs))] + poolOpaque[r.IntN(len(poolOpaque))]
	case 1:
		k = poolDirs[r.IntN(len(poolDirs))] + strings.ToUpper(poolDigest(r.IntN(6))) + poolExts[r.IntN(len(poolExts))]
	default:
		k = poolDirs[r.IntN(len(poolDirs))] + poolDigest(r.IntN(6)) + poolExts[r.IntN(len(poolExts))]
	}
	if r.IntN(20) == 0 {
		k += "/"
	}
	return k
}

func randomText(r *rand.Rand, keys []string) []byte {
	var b strings.Builder
	for range r.IntN(6) {
		switch r.IntN(7) {
		case 0:
			b.WriteString(poolSeps[r.IntN(len(poolSeps))])
		case 1:
			d := poolDigest(r.IntN(7))
			if r.IntN(2) == 0 {
				d = strings.ToUpper(d)
			}
			b.WriteString(d)
		case 2:
			b.WriteString(poolDigest(r.IntN(6)) + "f") // 65 hex characters
		case 3:
			b.WriteString(poolOpaque[r.IntN(len(poolOpaque))])
		default:
			if len(keys) == 0 {
				continue
			}
			k := keys[r.IntN(len(keys))]
			switch r.IntN(3) {
			case 0:
				b.WriteString(k)
			case 1:
				b.WriteString(path.Base(k))
			default:
				name := path.Base(k)
				b.WriteString(strings.TrimSuffix(name, path.Ext(name)))
			}
		}
		if r.IntN(3) == 0 {
			b.WriteString(poolSeps[r.IntN(len(poolSeps))])
		}
	}
	return []byte(b.String())
}

// checkAgainstOracle adds keys to an Index and to the oracle, marks both with
// texts, and compares every mark, key, lookup and key order.
func checkAgainstOracle(t *testing.T, keys []string, texts [][]byte) {
	t.Helper()
	x, o := NewIndex(), newOracleIndex()
	for _, k := range keys {
		if a, b := x.Add(k), o.Add(k); a != b {
			t.Fatalf("Add(%q) = %d, oracle %d", k, a, b)
		}
	}
	for _, s := range texts {
		x.Mark(s)
		o.Mark(s)
	}
	if x.Len() != len(keys) {
		t.Fatalf("Len = %d, want %d", x.Len(), len(keys))
	}
	for id, k := range keys {
		if got, want := x.Referenced(id), o.marks[id]; got != want {
			t.Fatalf("blob %d %q: referenced = %v, oracle %v\nkeys %q\ntexts %q", id, k, got, want, keys, texts)
		}
		if got := x.Key(id); got != k {
			t.Fatalf("Key(%d) = %q, want %q", id, got, k)
		}
		if got := string(x.AppendKey([]byte("pre"), id)); got != "pre"+k {
			t.Fatalf("AppendKey(%d) = %q", id, got)
		}
		if got, ok := x.Lookup(k); !ok || keys[got] != k {
			t.Fatalf("Lookup(%q) = %d, %v", k, got, ok)
		}
	}
	if _, ok := x.Lookup(digest("absent") + ".png"); ok {
		t.Fatal("Lookup found a key never added")
	}
	for a := range keys {
		for b := range keys {
			if got, want := x.CompareKeys(a, b), strings.Compare(keys[a], keys[b]); got != want {
				t.Fatalf("CompareKeys(%q, %q) = %d, want %d", keys[a], keys[b], got, want)
			}
		}
	}
}

// TestIndexAgreesWithOracle: on random stores and session strings the
// compact index marks exactly the blobs the map-based rule marks.
func TestIndexAgreesWithOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for range rounds {
		keys := make([]string, r.IntN(30))
		for i := range keys {
			keys[i] = randomKey(r)
		}
		texts := make([][]byte, r.IntN(8))
		for i := range texts {
			texts[i] = randomText(r, keys)
		}
		checkAgainstOracle(t, keys, texts)
	}
}

// FuzzIndex: keys and one session string from arbitrary bytes; the index must
// agree with the oracle.
func FuzzIndex(f *testing.F) {
	f.Add("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png\nu/f.png\nmy photo.jpg", "see 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08 and f.png.")
	f.Add("a/b.tar\nb\n.x", "b. a/b.tar")
	f.Fuzz(func(t *testing.T, keyList, text string) {
		keys := strings.Split(keyList, "\n")
		if len(keys) > 64 {
			keys = keys[:64]
		}
		checkAgainstOracle(t, keys, [][]byte{[]byte(text)})
	})
}

func TestIndexAddAfterMarkPanics(t *testing.T) {
	x := NewIndex()
	x.Add("a.png")
	x.Mark([]byte("a.png"))
	defer func() {
		if recover() == nil {
			t.Fatal("Add after Mark did not panic: the new blob could never be marked")
		}
	}()
	x.Add("b.png")
}

// TestIndexManyBlobs crosses chunk boundaries and checks every key and mark.
func TestIndexManyBlobs(t *testing.T) {
	const n = 3*65536 + 17 // three chunks of pkg/chunked and some
	x := NewIndex()
	key := func(i int) string { return fmt.Sprintf("%064x.png", i*7919) }
	for i := range n {
		if id := x.Add(key(i)); id != i {
			t.Fatalf("id %d for blob %d", id, i)
		}
	}
	for i := 0; i < n; i += 3 {
		x.Mark([]byte("/srv/inbound/" + key(i)))
	}
	for i := range n {
		if got, want := x.Referenced(i), i%3 == 0; got != want {
			t.Fatalf("blob %d: referenced %v", i, got)
		}
		if x.Key(i) != key(i) {
			t.Fatalf("Key(%d) = %s", i, x.Key(i))
		}
	}
}

// TestIndexMarkDoesNotAllocate: Mark runs on every string of every session.
func TestIndexMarkDoesNotAllocate(t *testing.T) {
	x := NewIndex()
	a := digest("a")
	x.Add(a + ".png")
	x.Add("u/t/f.png")
	x.Add("my photo.jpg")
	s := []byte("see /srv/inbound/" + strings.ToUpper(a) + ".png and u/t/f.png. or my photo.jpg")
	if n := testing.AllocsPerRun(100, func() { x.Mark(s) }); n != 0 {
		t.Fatalf("Mark allocates %v times per string", n)
	}
}

// TestNameEnds: where migrate's copies are cut out of the text (gc's
// CopiedTo), a name ends before anything that does not go on a path's name.
func TestNameEnds(t *testing.T) {
	for rest, want := range map[string]bool{
		"": true, ".": true, "..": true, "&right=x": true, ":b.png": true, "=": true, "?": true, "#": true,
		",": true, ";": true, " ": true, "/": true, "、": true, `\n`: true,
		".bak": false, "-thumb": false, "_2": false, "x": false, ".x": false, "0": false,
	} {
		if got := nameEnds([]byte(rest)); got != want {
			t.Errorf("nameEnds(%q) = %v, want %v", rest, got, want)
		}
	}
}

// Words are runs of ASCII letters and digits; the hex part is the longest
// run of at least 16 hex digits; a skeleton is the stem's words in NFC and,
// when they differ, in NFD.
func TestWordsAndParts(t *testing.T) {
	if got := fmt.Sprint(wordsOf("Bob's_März-2 notes.v2")); got != "[bob s m rz 2 notes v2]" {
		t.Errorf("wordsOf = %s", got)
	}
	if got := hexPart("x-0123456789abcdef-ABCDEF0123456789AB.png"); got != "abcdef0123456789ab" {
		t.Errorf("hexPart = %q", got)
	}
	if got := hexPart("0123456789abcde.png"); got != "" {
		t.Errorf("hexPart of 15 digits = %q", got)
	}
	if got := fmt.Sprint(skeletonsOf("März.pdf")); got != "[[m rz] [ma rz]]" {
		t.Errorf("skeletonsOf = %s", got)
	}
	if got := fmt.Sprint(skeletonsOf(".hidden")); got != "[[hidden]]" {
		t.Errorf("skeletonsOf(.hidden) = %s", got)
	}
	if got := skeletonsOf("写真.jpg"); got != nil {
		t.Errorf("skeletonsOf(写真.jpg) = %q", got)
	}
}
