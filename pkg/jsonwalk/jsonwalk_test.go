package jsonwalk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

// recorder keeps every string with its pointer, and checks Begin/End balance.
type recorder struct {
	got   []string
	depth int
}

func (r *recorder) Begin(w *Walker, kind byte) error { r.depth++; return nil }
func (r *recorder) End(w *Walker, kind byte) error   { r.depth--; return nil }
func (r *recorder) String(w *Walker, s []byte, off int64) error {
	r.got = append(r.got, w.Pointer()+"="+string(s))
	return nil
}

// oracle lists the strings of a JSON stream the way the recorder does, in order,
// using encoding/json's tokenizer as the reference implementation (it keeps
// duplicate member names, which a map would merge).
func oracle(t testing.TB, data []byte) []string {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber() // a number too large for a float64 is still JSON
	type level struct {
		object bool
		index  int
		key    string
		isKey  bool // the next string token in this object is a member name
	}
	var stack []level
	var out []string
	pointer := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.object {
				b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(l.key, "~", "~0"), "/", "~1"))
			} else {
				fmt.Fprintf(&b, "/%d", l.index)
			}
		}
		return b.String()
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].isKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("oracle: %v", err)
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, level{object: true, isKey: true})
			case '[':
				stack = append(stack, level{})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].isKey {
				stack[n-1].key, stack[n-1].isKey = v, false
				continue
			}
			out = append(out, pointer()+"="+v)
			afterValue()
		default:
			afterValue()
		}
	}
}

func walk(t testing.TB, r io.Reader) ([]string, error) {
	rec := &recorder{}
	err := New(r, rec, Limits{}).Run()
	if err == nil && rec.depth != 0 {
		t.Fatalf("unbalanced Begin/End: depth %d", rec.depth)
	}
	return rec.got, err
}

const session = `{
  "task_id": "t-1",
  "messages": [
    {"role": "user", "content": "What's in this image?",
     "parts": [
       {"type": "text", "text": "What\u0027s in this \"image\"?\n"},
       {"type": "image", "media": {"mimeType": "image/png", "uri": "\/srv\/agent\/x.png"}}]},
    {"role": "assistant", "content": "A cat \ud83d\udc08.", "n": -1.5e3, "ok": true, "none": null, "a/b~c": "k"}
  ],
  "empty": {}, "list": [[], [""]]
}`

func TestMatchesEncodingJSON(t *testing.T) {
	inputs := map[string]string{
		"session":     session,
		"jsonl":       "{\"a\":\"1\"}\n{\"b\":[\"2\",\"3\"]}\n\"top\"\n",
		"scalars":     `[1, -0.5, 2e10, true, false, null, "x"]`,
		"escapes":     `["\\\\", "\\\"", "\u00e9\u4e2d", "tab\there", "\/"]`,
		"empty input": "",
	}
	for name, in := range inputs {
		// Read the same input whole, a byte at a time and in odd chunks, so
		// every buffer boundary falls inside some token.
		readers := map[string]io.Reader{
			"whole":   strings.NewReader(in),
			"onebyte": iotest.OneByteReader(strings.NewReader(in)),
			"half":    iotest.HalfReader(strings.NewReader(in)),
		}
		want := oracle(t, []byte(in))
		for rname, r := range readers {
			got, err := walk(t, r)
			if err != nil {
				t.Fatalf("%s/%s: %v", name, rname, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%s:\n got %q\nwant %q", name, rname, got, want)
			}
		}
	}
}

func TestLongStringAcrossBuffers(t *testing.T) {
	long := strings.Repeat(`ab\"c\\`, 200000) // 1.4 MB, escapes straddle every refill
	in := `{"k":"` + long + `","after":"x"}`
	got, err := walk(t, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := oracle(t, []byte(in))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("long string decoded wrongly (len got %d want %d)", len(got[1]), len(want[1]))
	}
}

func TestTruncatedAndMalformed(t *testing.T) {
	cases := []struct {
		in     string
		offset int64
		msg    string
	}{
		{`{"messages": [{"uri": "/x"}`, 27, "unexpected end of input inside array at /messages"},
		{`{"a": "unterminated`, 19, "inside a string"},
		{`{"a" "b"}`, 5, "expected ':'"},
		{`{"a": tru}`, 6, `invalid value "tru"`},
		{`[1, 2}`, 5, "closes an array"},
		{`{"a":1,}`, 7, "expected a member name"},
		{`]`, 0, "unexpected ']'"},
		{`{"a": {"b": [`, 13, "inside array at /a/b"},
	}
	for _, c := range cases {
		_, err := walk(t, strings.NewReader(c.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: err = %v, want *SyntaxError", c.in, err)
			continue
		}
		if se.Offset != c.offset || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: got offset %d %q, want offset %d containing %q", c.in, se.Offset, se.Msg, c.offset, c.msg)
		}
	}
}

func TestDeepNestingIsBounded(t *testing.T) {
	// A million levels: far past any recursion limit, rejected at the cap without
	// reading further or growing the stack.
	in := strings.Repeat("[", 1_000_000)
	_, err := walk(t, strings.NewReader(in))
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting deeper than") || se.Offset != DefaultMaxDepth {
		t.Fatalf("err = %v", err)
	}
	ok := strings.Repeat(`{"a":[`, 4000) + `"deep"` + strings.Repeat("]}", 4000)
	got, err := walk(t, strings.NewReader(ok))
	if err != nil || len(got) != 1 || !strings.HasSuffix(got[0], "/a/0=deep") {
		t.Fatalf("8000 levels: %v %v", err, len(got))
	}
}

func TestOversizedTokenIsAnError(t *testing.T) {
	in := `["` + strings.Repeat("x", 1<<20) + `"]`
	rec := &recorder{}
	err := New(strings.NewReader(in), rec, Limits{MaxToken: 512 << 10}).Run()
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "longer than") {
		t.Fatalf("err = %v", err)
	}
}

func TestInvalidUTF8PassesThrough(t *testing.T) {
	in := []byte("{\"a\":\"\xff\xfe/x\"}")
	rec := &recorder{}
	if err := NewBytes(in, rec, Limits{}).Run(); err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != 1 || rec.got[0] != "/a=\xff\xfe/x" {
		t.Fatalf("got %q", rec.got)
	}
}

func TestOffsetsPointAtStrings(t *testing.T) {
	in := `{"a": ["xx", {"b": "yy"}]}` + "\n" + `{"c": "zz"}`
	var offs []int64
	h := handlerFunc(func(w *Walker, s []byte, off int64) error {
		if in[off] != '"' || in[off+1:off+3] != string(s) {
			t.Errorf("offset %d does not point at %q", off, s)
		}
		offs = append(offs, off)
		return nil
	})
	if err := New(iotest.OneByteReader(strings.NewReader(in)), h, Limits{}).Run(); err != nil {
		t.Fatal(err)
	}
	if len(offs) != 3 {
		t.Fatalf("offsets %v", offs)
	}
}

func TestHandlerErrorStops(t *testing.T) {
	stop := errors.New("stop")
	h := handlerFunc(func(w *Walker, s []byte, off int64) error { return stop })
	if err := NewBytes([]byte(`["a","b"]`), h, Limits{}).Run(); err != stop {
		t.Fatalf("err = %v", err)
	}
}

func TestReadErrorIsReported(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader(`{"a": "b", `), iotest.ErrReader(boom))
	_, err := walk(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

type handlerFunc func(w *Walker, s []byte, off int64) error

func (f handlerFunc) Begin(*Walker, byte) error                   { return nil }
func (f handlerFunc) End(*Walker, byte) error                     { return nil }
func (f handlerFunc) String(w *Walker, s []byte, off int64) error { return f(w, s, off) }

// FuzzWalk checks that the walker never panics, and that on every input
// encoding/json accepts it reports exactly the strings encoding/json decodes.
func FuzzWalk(f *testing.F) {
	for _, s := range []string{session, `[]`, `{"a":"\ud800"}`, `"x"`, `{"a":[1,{"b":null}]}`, "\xef\xbb\xbf{}", `{"a":"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := walk(t, iotest.HalfReader(bytes.NewReader(data)))
		if !json.Valid(data) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
			return
		}
		if surrogateEscape.Match(data) {
			// \udc80-\udcff decode to the bytes they stand for (Python's
			// surrogateescape), where encoding/json gives U+FFFD: two of them
			// can make a character it never would (TestAppendUnescapedSurrogates).
			return
		}
		if err != nil {
			t.Fatalf("valid JSON rejected: %v", err)
		}
		want := oracle(t, data)
		if !reflect.DeepEqual(normalise(got), normalise(want)) {
			t.Fatalf("got %q want %q", got, want)
		}
		// Whole, strings are found eight bytes at a time; at a read's
		// end they go the long way.
		whole, err := walk(t, bytes.NewReader(data))
		if err != nil || !reflect.DeepEqual(whole, got) {
			t.Fatalf("walked whole: %q, %v; half at a time: %q", whole, err, got)
		}
	})
}

// surrogateEscape finds a \u escape of U+DC80 to U+DCFF.
var surrogateEscape = regexp.MustCompile(`\\u[dD][cC][89a-fA-F][0-9a-fA-F]`)

// normalise maps each invalid UTF-8 byte to U+FFFD as encoding/json does, so that the
// comparison is about structure and escapes, not about replacement policy.
func normalise(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		var b strings.Builder
		for _, r := range s { // ranging over a string yields U+FFFD per invalid byte
			b.WriteRune(r)
		}
		out[i] = b.String()
	}
	return out
}

// nameRecorder records member names and numbers besides strings.
type nameRecorder struct {
	recorder
	names, numbers []string
}

func (r *nameRecorder) Name(w *Walker, name []byte) error {
	r.names = append(r.names, string(name))
	return nil
}

func (r *nameRecorder) Number(w *Walker, num []byte) error {
	r.numbers = append(r.numbers, string(num))
	return nil
}

func TestNameHandlerSeesMemberNamesAndNumbers(t *testing.T) {
	in := `{"attachments": {"ab\u0063.png": {"media_id": 1234567890, "ok": true, "n": null}}, "list": [-1.5e3, "x"]}`
	r := &nameRecorder{}
	if err := NewBytes([]byte(in), r, Limits{}).Run(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(r.names, ","), "attachments,abc.png,media_id,ok,n,list"; got != want {
		t.Errorf("names = %s, want %s", got, want)
	}
	if got, want := strings.Join(r.numbers, ","), "1234567890,-1.5e3"; got != want {
		t.Errorf("numbers = %s, want %s", got, want)
	}
	// The same through a reader, across buffer refills.
	r2 := &nameRecorder{}
	if err := New(iotest.OneByteReader(strings.NewReader(in)), r2, Limits{}).Run(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(r2.names, ",") != strings.Join(r.names, ",") || strings.Join(r2.numbers, ",") != strings.Join(r.numbers, ",") {
		t.Errorf("streamed walk saw names %v numbers %v, want %v %v", r2.names, r2.numbers, r.names, r.numbers)
	}
}

// A string's end is found the same wherever its closing quote and its
// escapes fall: in the first words, which are read eight bytes at a time,
// across a word's edge, past them, and across a read's end.
func TestStringEndsAtEveryPosition(t *testing.T) {
	var in strings.Builder
	in.WriteString("[")
	for n := 0; n <= 80; n++ {
		for _, esc := range []string{"", `\"`, `\\`, `\u0041`, `\\\"`} {
			for at := 0; at <= n; at += max(1, n/9) {
				if in.Len() > 1 {
					in.WriteString(",")
				}
				body := strings.Repeat("x", at) + esc + strings.Repeat("y", n-at)
				fmt.Fprintf(&in, "%q, \"%s\"", body, body)
			}
		}
	}
	in.WriteString("]")
	data := in.String()
	if !json.Valid([]byte(data)) {
		t.Fatal("test input is not JSON")
	}
	want := oracle(t, []byte(data))
	for name, r := range map[string]io.Reader{
		"whole":   strings.NewReader(data),
		"onebyte": iotest.OneByteReader(strings.NewReader(data)),
		"half":    iotest.HalfReader(strings.NewReader(data)),
	} {
		got, err := walk(t, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d strings differ from encoding/json's", name, len(got))
		}
	}
}

// TestAppendUnescapedSurrogates: a pair is one code point; an unpaired
// surrogate is U+FFFD, except U+DC80 to U+DCFF, Python's surrogateescape
// of a file name's byte that is not UTF-8 (json.dumps of an os.listdir
// name), which is that byte.
func TestAppendUnescapedSurrogates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`caf\u00e9.jpg`, "caf\u00e9.jpg"},
		{`caf\udce9.jpg`, "caf\xe9.jpg"},
		{`\udce9\udc80x`, "\xe9\x80x"},
		{`\uDCFF`, "\xff"},
		{`\ud83d\ude00`, "\U0001F600"},
		{`\ud800x`, "\uFFFDx"},
		{`\udc7f`, "\uFFFD"},           // not a byte Python escapes: ASCII is never
		{`\ud800\udce9`, "\U000100E9"}, // a pair, not an escaped byte
	} {
		if got := string(appendUnescaped(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("appendUnescaped(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
