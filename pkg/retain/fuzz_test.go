package retain_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/retain/retaintest"
)

// docGen builds a JSON document from fuzz bytes and plants one reference text
// at a position the bytes choose: a string value, a member name, prose, or
// JSON embedded in a string up to three levels deep.
type docGen struct {
	in      []byte
	style   retaintest.Style
	ref     string
	planted bool
}

func (g *docGen) next() byte {
	if len(g.in) == 0 {
		return 0
	}
	c := g.in[0]
	g.in = g.in[1:]
	return c
}

// value writes a value; it plants the reference when the bytes say so, or
// when it is the last chance to.
func (g *docGen) value(depth int) string {
	c := g.next()
	if !g.planted && (c%7 == 0 || len(g.in) == 0 || depth > 6) {
		return g.plant(c, depth)
	}
	switch {
	case depth > 6 || len(g.in) == 0:
		return retaintest.Quote("leaf", g.style)
	case c%5 == 1:
		n := int(g.next() % 4)
		var members []string
		for i := range n {
			members = append(members, "k"+string(rune('a'+i)), g.value(depth+1))
		}
		return retaintest.Object(g.style, members...)
	case c%5 == 2:
		n := int(g.next() % 4)
		var elems []string
		for range n {
			elems = append(elems, g.value(depth+1))
		}
		return "[" + strings.Join(elems, ",") + "]"
	case c%5 == 3:
		return "12345"
	}
	return retaintest.Quote("some prose, nothing here", g.style)
}

func (g *docGen) plant(c byte, depth int) string {
	g.planted = true
	st := g.style
	switch (c / 7) % 5 {
	case 0:
		return retaintest.Quote(g.ref, st)
	case 1:
		return retaintest.Object(st, g.ref, "true")
	case 2:
		return retaintest.Quote("see "+g.ref+"\nthen", st)
	}
	// JSON inside a string, one to three levels.
	inner := retaintest.Object(st, "path", retaintest.Quote(g.ref, st))
	for range 1 + int(c%3) {
		inner = retaintest.Object(st, "arguments", retaintest.Quote(inner, st))
	}
	return inner
}

var fuzzRefForms = []func(name string) string{
	func(n string) string { return "/srv/My Agent & Co/.forge/files/inbound/" + n },
	func(n string) string { return "file:///srv/a%20b/" + strings.ReplaceAll(n, " ", "%20") },
	func(n string) string { return "http://localhost/files/" + n },
	func(n string) string { return n },
}

// FuzzRetentionKeepsPlanted is the differential target: a reference to a blob
// name, in a random spelling and position of a random JSON document, always
// keeps the blob.
func FuzzRetentionKeepsPlanted(f *testing.F) {
	f.Add([]byte("a"), "第二版", uint8(0), uint8(0), uint8(0))
	f.Add([]byte{1, 3, 7, 2, 2, 14, 21}, ".final copy", uint8(1), uint8(1), uint8(1))
	f.Add([]byte{1, 2, 1, 1, 28}, "-a&b<c>.png", uint8(2), uint8(2), uint8(2))
	f.Add([]byte{5, 5, 5, 35}, ".JPG", uint8(1), uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, shape []byte, suffix string, kind, form, style uint8) {
		shape = append(shape, kind) // never empty
		seed := sha256.Sum256(append([]byte(suffix), shape...))
		u := hex.EncodeToString(seed[:])
		var name string
		switch kind % 3 {
		case 0:
			name = u + ".png"
		case 1:
			name = u[:32] + clean(suffix)
		default:
			name = u[:12] + "-" + clean(suffix)
		}
		x := retain.NewIndex()
		id := x.Add(name)
		control := x.Add(strings.Repeat("c", 64) + ".png")
		g := &docGen{in: shape, style: retaintest.Styles[int(style)%len(retaintest.Styles)], ref: fuzzRefForms[int(form)%len(fuzzRefForms)](name)}
		doc := g.value(0)
		if !g.planted {
			doc = "[" + doc + "," + g.plant(shape[len(shape)-1:][0], 1) + "]"
		}
		ex := &ref.Extractor{Found: func(ref.Reference, ref.Place) {}, Text: x.Mark}
		if err := ex.Document(strings.NewReader(doc), ref.Place{}); err != nil {
			t.Fatalf("generated document does not parse: %v\n%s", err, doc)
		}
		if !x.Referenced(id) {
			t.Fatalf("blob %q not kept by %s", name, doc)
		}
		if x.Referenced(control) {
			t.Fatalf("control marked by %s", doc)
		}
	})
}

// clean makes a fuzzed suffix a plausible file-name suffix: no slash, no
// control character, no NUL, not empty.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == '/' || r == '\\' || r == 0x7f || r == 0xfffd {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\"") {
		return ".bin"
	}
	return s
}

// The property that ties the two rules together: every blob the precise
// extractor finds inside the store is kept by retention.
func FuzzPreciseImpliesRetained(f *testing.F) {
	for i, c := range retaintest.Cases() {
		if i%17 == 0 { // a sample: the whole table runs in the test below
			f.Add([]byte(c.Doc))
		}
	}
	f.Add([]byte(`{"uri":"/srv/agent/.forge/files/inbound/x y.png","p":"file:///srv/agent/.forge/files/inbound/%E7%AC%AC.png"}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkPreciseImpliesRetained(t, doc)
	})
}

func checkPreciseImpliesRetained(t *testing.T, doc []byte) {
	t.Helper()
	resolvers := []*ref.Resolver{
		ref.NewLocalResolver("/srv/My Agent & Co/.forge/files/inbound", nil, []string{"/srv/My Agent & Co"}),
		ref.NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"}),
		ref.NewLocalResolver("/home/u/.coffer/channel-media", nil, []string{"/home/u"}),
	}
	var keys []string
	ex := &ref.Extractor{Found: func(r ref.Reference, _ ref.Place) {
		for _, rs := range resolvers {
			if st, key := rs.Resolve(r); st == ref.Inside {
				keys = append(keys, key)
			}
		}
	}}
	if ex.Document(strings.NewReader(string(doc)), ref.Place{}) != nil || len(keys) == 0 {
		return
	}
	x := retain.NewIndex()
	ids := make([]int, len(keys))
	for i, k := range keys {
		ids[i] = x.Add(k)
	}
	mark := &ref.Extractor{Found: func(ref.Reference, ref.Place) {}, Text: x.Mark}
	if err := mark.Document(strings.NewReader(string(doc)), ref.Place{}); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if !x.Referenced(ids[i]) {
			t.Fatalf("the extractor finds %q inside the store, the retention rule does not keep it: %s", k, doc)
		}
	}
}

func TestPreciseImpliesRetainedOnTheTable(t *testing.T) {
	for _, c := range retaintest.Cases() {
		checkPreciseImpliesRetained(t, []byte(c.Doc))
	}
}
