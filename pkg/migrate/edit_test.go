package migrate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/ref"
)

const (
	dA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	dB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	dC = "fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13"
)

func replacer() *migrate.Replacer {
	migrated := map[string]bool{dA + ".png": true, dB + ".pdf": true}
	return &migrate.Replacer{
		Resolver: ref.NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"}),
		Target: func(key string) (string, bool) {
			return "s3://media/inbound/" + key, migrated[key]
		},
	}
}

// rewriteAndBack rewrites unit, checks the result with check, and proves that
// Revert restores the original bytes exactly.
func rewriteAndBack(t *testing.T, place ref.Place, unit string) (string, migrate.UnitEdits) {
	t.Helper()
	ue, err := replacer().Find(place, []byte(unit))
	if err != nil {
		t.Fatal(err)
	}
	out, err := migrate.Apply([]byte(unit), ue.Edits)
	if err != nil {
		t.Fatal(err)
	}
	rec := migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(unit)), NewSHA256: digest(out), Edits: ue.Edits}
	back, err := migrate.Revert(out, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(ue.Edits) > 0 && string(back) != unit {
		t.Fatalf("revert gave\n%s\nwant\n%s", back, unit)
	}
	return string(out), ue
}

func TestFindDocument(t *testing.T) {
	doc := `{
  "task_id": "t-1",
  "messages": [
    {"role": "user", "parts": [
      {"type": "image", "media": {"mimeType": "image/png", "uri": "/srv/agent/.forge/files/inbound/` + dA + `.png"}},
      {"type": "document", "media": {"uri": "file:///srv/agent/.forge/files/inbound/` + dB + `.pdf"}},
      {"type": "image", "media": {"uri": ".forge/files/inbound/` + dA + `.png"}},
      {"type": "image", "media": {"uri": "/srv/agent/.forge/files/inbound/` + dC + `.png"}},
      {"type": "text", "text": "saved to /srv/agent/.forge/files/inbound/` + dA + `.png.\nand /backup/srv/agent/.forge/files/inbound/` + dA + `.png stays"}
    ]},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "look",
      "arguments": "{\"path\": \"/srv/agent/.forge/files/inbound/` + dA + `.png\", \"note\": \"caf\u00e9\"}"}}]}
  ]
}`
	out, ue := rewriteAndBack(t, ref.Place{Source: "s", Document: "sessions/t-1.json"}, doc)
	if len(ue.Edits) != 5 || len(ue.Kept) != 0 {
		t.Fatalf("edits %+v kept %v", ue.Edits, ue.Kept)
	}
	for _, want := range []string{
		`"uri": "s3://media/inbound/` + dA + `.png"`,
		`"uri": "s3://media/inbound/` + dB + `.pdf"`,
		`saved to s3://media/inbound/` + dA + `.png.\nand /backup/srv/agent/.forge/files/inbound/` + dA + `.png stays`,
		`\"path\": \"s3://media/inbound/` + dA + `.png\", \"note\": \"caf\u00e9\"`,
		`"uri": "/srv/agent/.forge/files/inbound/` + dC + `.png"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rewritten document lacks %s:\n%s", want, out)
		}
	}
	if strings.Count(out, "s3://") != 5 {
		t.Errorf("rewritten document:\n%s", out)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("rewritten document is not JSON: %v", err)
	}
}

func TestFindValues(t *testing.T) {
	// coffer: a JSON array of blocks in a TEXT column.
	blocks := `[{"type":"text","text":"look"},{"type":"attachment","path":"/srv/agent/.forge/files/inbound/` + dA + `.png","mime":"image/png"}]`
	out, ue := rewriteAndBack(t, ref.Place{Table: "chat_messages", Key: "id=m1", Column: "content"}, blocks)
	if len(ue.Edits) != 1 || !strings.Contains(out, `"path":"s3://media/inbound/`+dA+`.png"`) {
		t.Fatalf("blocks: %s %+v", out, ue)
	}
	// Plain text in a column.
	out, _ = rewriteAndBack(t, ref.Place{Table: "notes", Key: "id=1", Column: "body"}, "see /srv/agent/.forge/files/inbound/"+dB+".pdf, please")
	if out != "see s3://media/inbound/"+dB+".pdf, please" {
		t.Fatalf("plain: %q", out)
	}
	// A {bucket, path} pair cannot become a URL: it is kept and said so.
	pair := `{"attachments":[{"bucket":"b","path":"x/` + dA + `.png"}]}`
	r := &migrate.Replacer{Resolver: ref.NewBucketResolver("s3", "b", "x/"), Target: func(k string) (string, bool) { return "gs://other/" + k, true }}
	ue, err := r.Find(ref.Place{Table: "messages", Key: "id=1", Column: "metadata"}, []byte(pair))
	if err != nil || len(ue.Edits) != 0 || len(ue.Kept) != 1 {
		t.Fatalf("pair: %+v %v", ue, err)
	}
}

func TestFindMalformedDocumentLeftAlone(t *testing.T) {
	_, err := replacer().Find(ref.Place{Document: "t.json"}, []byte(`{"uri": "/srv/agent/.forge/files/inbound/`+dA+`.png"`))
	if err == nil || !strings.Contains(err.Error(), "t.json") {
		t.Fatalf("err = %v", err)
	}
}

// TestRevertAfterAppend: the agent appended a message after the rewrite; the
// rewritten reference is still put back.
func TestRevertAfterAppend(t *testing.T) {
	doc := `{"messages":[{"uri":"/srv/agent/.forge/files/inbound/` + dA + `.png"}]}`
	place := ref.Place{Document: "t.json"}
	ue, err := replacer().Find(place, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := migrate.Apply([]byte(doc), ue.Edits)
	rec := migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(doc)), NewSHA256: digest(out), Edits: ue.Edits}
	later := bytes.Replace(out, []byte(`]}`), []byte(`,{"role":"assistant","content":"a cat"}]}`), 1)
	back, err := migrate.Revert(later, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"uri":"/srv/agent/.forge/files/inbound/` + dA + `.png"},{"role":"assistant","content":"a cat"}]}`
	if string(back) != want {
		t.Fatalf("got %s", back)
	}
	// Already restored: nothing to do.
	if b, err := migrate.Revert([]byte(doc), rec); b != nil || err != nil {
		t.Fatalf("revert of the original: %q %v", b, err)
	}
	// Two different references rewritten to the same URL, and a third copy
	// appeared: ambiguous, left alone.
	doc2 := `{"a":"/srv/agent/.forge/files/inbound/` + dA + `.png","b":".forge/files/inbound/` + dA + `.png"}`
	ue, _ = replacer().Find(place, []byte(doc2))
	out, _ = migrate.Apply([]byte(doc2), ue.Edits)
	rec = migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(doc2)), NewSHA256: digest(out), Edits: ue.Edits}
	later = bytes.Replace(out, []byte(`}`), []byte(`,"c":"s3://media/inbound/`+dA+`.png"}`), 1)
	if _, err := migrate.Revert(later, rec); !errors.Is(err, migrate.ErrRevertConflict) {
		t.Fatalf("ambiguous revert: %v", err)
	}
}

// FuzzRewrite: whatever a session holds, a rewrite never breaks JSON that was
// valid, only touches references, and reverting restores the bytes exactly.
func FuzzRewrite(f *testing.F) {
	f.Add(`{"uri":"/srv/agent/.forge/files/inbound/`+dA+`.png"}`, true)
	f.Add(`["saved to /srv/agent/.forge/files/inbound/`+dB+`.pdf.", {"arguments":"{\"path\":\"./`+dA+`.png\"}"}]`, false)
	f.Add(`look at .forge/files/inbound/`+dA+`.png\n`, false)
	f.Add(`{"uri":"\/srv\/agent\/.forge\/files\/inbound\/`+dA+`.png","t":"\u00e9"}`, true)
	f.Add(`[{"arguments":"{\"path\":\"\\/srv\\/agent\\/.forge\\/files\\/inbound\\/`+dB+`.pdf\"}"}]`, false)
	f.Add(`{"a":"\u002fsrv\u002Fagent/.forge/files/inbound/`+dA+`.png \u0026 /srv/agent/.forge/files/inbound/`+dA+`.png"}`, true)
	f.Add(`{"":"\u0069 inbound/`+dA+`.png"}`, true)
	f.Fuzz(func(t *testing.T, unit string, document bool) {
		place := ref.Place{Document: "d.json"}
		if !document {
			place = ref.Place{Table: "t", Key: "id=1", Column: "c"}
		}
		ue, err := replacer().Find(place, []byte(unit))
		if err != nil {
			return
		}
		out, err := migrate.Apply([]byte(unit), ue.Edits)
		if err != nil {
			t.Fatalf("Find's edits do not apply: %v", err)
		}
		if json.Valid([]byte(unit)) && !json.Valid(out) {
			t.Fatalf("rewrite broke JSON:\n%s\n%s", unit, out)
		}
		for _, e := range ue.Edits {
			// The new reference, in whatever escapes its string uses, at
			// whatever depth of JSON in strings: a string that spells "i" as
			// "\u0069" has the new text spelled so too.
			if !strings.HasPrefix(unescapeAll(e.New), "s3://media/inbound/") {
				t.Fatalf("edit %+v", e)
			}
		}
		// A second run finds nothing more to rewrite and keeps what the first kept.
		again, err := replacer().Find(place, out)
		if err != nil {
			t.Fatalf("second run: %v", err)
		}
		if len(again.Edits) != 0 || len(again.Kept) != len(ue.Kept) {
			t.Fatalf("second run over %q: edits %+v, kept %q; first kept %q", out, again.Edits, again.Kept, ue.Kept)
		}
		rec := migrate.Record{Place: &place, OldSHA256: digest([]byte(unit)), NewSHA256: digest(out), Edits: ue.Edits}
		back, err := migrate.Revert(out, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(ue.Edits) > 0 && string(back) != unit {
			t.Fatalf("revert gave %q, want %q", back, unit)
		}
	})
}

// unescapeAll decodes the JSON escapes of s, and those they decode to, as
// deep as JSON is embedded in strings.
func unescapeAll(s string) string {
	for range 8 {
		text, _ := jsonwalk.AppendUnescapedOffsets(nil, nil, []byte(s))
		d := string(text)
		if d == s {
			break
		}
		s = d
	}
	return s
}

// jsonWriter writes JSON the way one real encoder does.
type jsonWriter struct {
	name string
	// doc writes a whole document, inner the JSON that goes into a string
	// (a tool call's arguments).
	doc, inner func(v any) string
}

// stringStyle is how a test encoder spells strings: Python's json.dumps
// (ensure_ascii), PHP's json_encode (escaped slashes, \u for non-ASCII),
// Jackson's ESCAPE_NON_ASCII (upper-case hex).
type stringStyle struct {
	slash, ascii, upper bool
	comma, colon        string
}

// encode writes v (maps with sorted keys, slices, strings) in the style: an
// encoder independent of the one under test.
func (st stringStyle) encode(v any) string {
	var b strings.Builder
	st.value(&b, v)
	return b.String()
}

func (st stringStyle) value(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		st.str(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(st.comma)
			}
			st.value(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(st.comma)
			}
			st.str(b, k)
			b.WriteString(st.colon)
			st.value(b, v[k])
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("stringStyle: %T", v))
	}
}

func (st stringStyle) str(b *strings.Builder, s string) {
	hexf := "\\u%04x"
	if st.upper {
		hexf = "\\u%04X"
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '/' && st.slash:
			b.WriteString(`\/`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || st.ascii && r >= 0x7f && r <= 0xffff:
			fmt.Fprintf(b, hexf, r)
		case st.ascii && r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(b, hexf+hexf, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func goIndent(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func goCompact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var jsonWriters = []jsonWriter{
	// forge: json.MarshalIndent, HTML-safe: & < > as \u0026 \u003c \u003e.
	{"go", goIndent, goCompact},
	// coffer: json.dumps defaults.
	{"python", stringStyle{ascii: true, comma: ", ", colon: ": "}.encode, stringStyle{ascii: true, comma: ", ", colon: ": "}.encode},
	// PHP json_encode defaults: "\/" and \u for non-ASCII.
	{"php", stringStyle{slash: true, ascii: true, comma: ",", colon: ":"}.encode, stringStyle{slash: true, ascii: true, comma: ",", colon: ":"}.encode},
	// PHP with JSON_UNESCAPED_UNICODE, old Java and JavaScript encoders: only "\/".
	{"slashes", stringStyle{slash: true, comma: ",", colon: ":"}.encode, stringStyle{slash: true, comma: ",", colon: ":"}.encode},
	// Jackson with ESCAPE_NON_ASCII: upper-case hex.
	{"jackson", stringStyle{ascii: true, upper: true, comma: ",", colon: ":"}.encode, stringStyle{ascii: true, upper: true, comma: ",", colon: ":"}.encode},
}

// storedFile is a blob of a local store and the reference a session holds to it.
type storedFile struct {
	name, dir, key string
}

func (f storedFile) path() string { return f.dir + "/" + f.key }

var styleFiles = []storedFile{
	// forge under a work directory whose name has an "&" (Go writes \u0026).
	{"forge", "/srv/R&D/a&b/.forge/files/inbound", dA + ".png"},
	// coffer: uuid4().hex and the user's own suffix.
	{"coffer", "/home/u/.coffer/channel-media", "b0f2c5a1d3e94f6b8a7c0d1e2f3a4b5c.第二版"},
	{"coffer-astral", "/home/u/.coffer/channel-media", "c1d2e3f4a5b60718293a4b5c6d7e8f90.📷"},
}

// styleTarget is where the test migrates to: a prefix with characters each
// style spells differently.
const styleTarget = "s3://media/r&d/<new>/"

// positions are the places of a reference in a unit: fill builds the unit
// around the reference text; sql says it is a column value.
var positions = []struct {
	name  string
	sql   bool
	fill  func(w jsonWriter, inner jsonWriter, ref string) string
	prose bool // found only for content-addressed names
}{
	{name: "top", fill: func(w, _ jsonWriter, ref string) string {
		return w.doc(map[string]any{"task_id": "t-1", "title": "Q3 <draft> & notes/第二版 — “final”", "messages": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"type": "image", "media": map[string]any{"uri": ref, "mimeType": "image/png"}}}},
		}})
	}},
	{name: "prose", prose: true, fill: func(w, _ jsonWriter, ref string) string {
		return w.doc(map[string]any{"summary": "saved to " + ref + ".\n\"ok\"\tdone, café & <b>"})
	}},
	{name: "depth1", fill: func(w, in jsonWriter, ref string) string {
		args := in.inner(map[string]any{"path": ref, "note": "café “quoted” & <x>"})
		return w.doc(map[string]any{"messages": []any{map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "crop", "arguments": args}},
		}}}})
	}},
	{name: "depth2", fill: func(w, in jsonWriter, ref string) string {
		inner2 := in.inner(map[string]any{"file": ref})
		args := in.inner(map[string]any{"tool": "read", "input": inner2, "why": "a/b & c"})
		return w.doc(map[string]any{"messages": []any{map[string]any{"tool_calls": []any{
			map[string]any{"function": map[string]any{"name": "delegate", "arguments": args}},
		}}}})
	}},
	{name: "sql", sql: true, fill: func(w, _ jsonWriter, ref string) string {
		return w.inner([]any{
			map[string]any{"type": "text", "text": "看这个 & that"},
			map[string]any{"type": "attachment", "path": ref, "mime": "image/jpeg", "filename": "第二版.jpg"},
		})
	}},
	{name: "sql-depth1", sql: true, fill: func(w, in jsonWriter, ref string) string {
		return w.inner([]any{map[string]any{"type": "tool_result", "tool_name": "Read", "output": in.inner(map[string]any{"file_path": ref, "pattern": "a&b <c> é/"})}})
	}},
	{name: "sql-depth2", sql: true, fill: func(w, in jsonWriter, ref string) string {
		inner2 := in.inner(map[string]any{"file_path": ref})
		return w.inner([]any{map[string]any{"type": "tool_result", "output": in.inner(map[string]any{"input": inner2, "grep": "a&b <c> é/"})}})
	}},
}

// TestFindEveryEncoding: a reference is rewritten whatever encoder wrote the
// string that holds it, at the top level, in JSON embedded one and two levels
// deep, and in a column value. The result is exactly what the same encoders
// write for the new reference (escapes kept, the new text spelled in the same
// style), it parses, rollback restores the original bytes, and a second run
// finds nothing left.
func TestFindEveryEncoding(t *testing.T) {
	for _, f := range styleFiles {
		r := &migrate.Replacer{
			Resolver: ref.NewLocalResolver(f.dir, nil, nil),
			Target: func(key string) (string, bool) {
				return styleTarget + key, key == f.key
			},
		}
		for _, pos := range positions {
			if pos.prose && f.name != "forge" {
				continue
			}
			for _, w := range jsonWriters {
				for _, in := range jsonWriters {
					if in.name != w.name && !strings.HasPrefix(pos.name, "depth") && !strings.HasPrefix(pos.name, "sql-") {
						continue
					}
					t.Run(f.name+"/"+pos.name+"/"+w.name+"/"+in.name, func(t *testing.T) {
						unit := pos.fill(w, in, f.path())
						want := pos.fill(w, in, styleTarget+f.key)
						place := ref.Place{Source: "s", Document: "sessions/t-1.json"}
						if pos.sql {
							place = ref.Place{Source: "s", Table: "chat_messages", Key: "id=m1", Column: "content"}
						}
						ue, err := r.Find(place, []byte(unit))
						must(t, err)
						if len(ue.Edits) != 1 || len(ue.Kept) != 0 {
							t.Fatalf("edits %+v kept %q in\n%s", ue.Edits, ue.Kept, unit)
						}
						out, err := migrate.Apply([]byte(unit), ue.Edits)
						must(t, err)
						if string(out) != want {
							t.Fatalf("rewritten\n%s\nwant what the encoder writes for the new reference\n%s", out, want)
						}
						var got, exp any
						must(t, json.Unmarshal(out, &got))
						must(t, json.Unmarshal([]byte(want), &exp))
						if !reflect.DeepEqual(got, exp) {
							t.Fatalf("decoded %v, want %v", got, exp)
						}
						if !strings.Contains(decodedStrings(t, got, 3), styleTarget+f.key) {
							t.Fatalf("no decoded string holds the new reference: %s", out)
						}
						rec := migrate.Record{T: "rewrite", Place: &place, OldSHA256: digest([]byte(unit)), NewSHA256: digest(out), Edits: ue.Edits}
						back, err := migrate.Revert(out, rec)
						must(t, err)
						if string(back) != unit {
							t.Fatalf("revert gave\n%s\nwant\n%s", back, unit)
						}
						again, err := r.Find(place, out)
						must(t, err)
						if len(again.Edits) != 0 || len(again.Kept) != len(ue.Kept) {
							t.Fatalf("second run: %+v", again)
						}
					})
				}
			}
		}
	}
}

// decodedStrings joins every string in v, decoding strings that hold JSON,
// down to depth levels.
func decodedStrings(t *testing.T, v any, depth int) string {
	var b strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch v := v.(type) {
		case string:
			var inner any
			if depth > 0 && json.Unmarshal([]byte(v), &inner) == nil {
				walk(inner, depth-1)
				return
			}
			b.WriteString(v + "\n")
		case []any:
			for _, e := range v {
				walk(e, depth)
			}
		case map[string]any:
			for _, e := range v {
				walk(e, depth)
			}
		}
	}
	walk(v, depth)
	return b.String()
}

// stillPointing counts the references in unit that the extractor finds and
// that still name a migrated blob of r's store: what a later run must keep.
func stillPointing(t *testing.T, r *migrate.Replacer, place ref.Place, unit []byte) int {
	t.Helper()
	n := 0
	ex := ref.Extractor{Found: func(rf ref.Reference, _ ref.Place) {
		if status, key := r.Resolver.Resolve(rf); status == ref.Inside {
			if _, ok := r.Target(key); ok {
				n++
			}
		}
	}}
	if place.Table == "" {
		must(t, ex.Document(bytes.NewReader(unit), place))
	} else {
		ex.Value(unit, place)
	}
	return n
}

// TestKeptExact: the references a run cannot rewrite are counted once each,
// so the first run's count is the number of references still pointing at
// migrated blobs afterwards, and a second run counts the same. The same
// reference spelled two ways in one unit, and a reference both in a pair and
// as a URL, are each accounted for.
func TestKeptExact(t *testing.T) {
	migrated := map[string]bool{"a.png": true, "b.png": true, "第二版.jpg": true}
	r := &migrate.Replacer{
		Resolver: ref.NewBucketResolver("s3", "media-src", "u/"),
		Target: func(key string) (string, bool) {
			return "gs://media-dst/u/" + key, migrated[key]
		},
	}
	units := []struct {
		place ref.Place
		unit  string
	}{
		{ref.Place{Document: "t-1.json"}, `{
  "content": "see s3://media-src/u/a.png and s3:\/\/media-src\/u\/a.png, twice",
  "other": "s3:\/\/media-src\/u\/a.png",
  "metadata": {"attachments": [{"bucket": "media-src", "path": "u/a.png"}, {"bucket": "media-src", "path": "u/b.png"}]},
  "tool_calls": [{"function": {"arguments": "{\"url\":\"s3:\\/\\/media-src\\/u\\/b.png\",\"also\":\"s3://media-src/u/c.png\"}"}}]
}`},
		{ref.Place{Table: "messages", Key: "id=1", Column: "metadata"}, `{"attachments": [{"bucket": "media-src", "path": "u/\u7b2c\u4e8c\u7248.jpg", "url": "s3://media-src/u/\u7b2c\u4e8c\u7248.jpg"}]}`},
		{ref.Place{Table: "messages", Key: "id=2", Column: "content"}, `saved s3://media-src/u/b.png and s3://media-src/u/b.png.`},
	}
	total := [2]int{}
	for _, u := range units {
		first, err := r.Find(u.place, []byte(u.unit))
		must(t, err)
		out, err := migrate.Apply([]byte(u.unit), first.Edits)
		must(t, err)
		if !json.Valid(out) && json.Valid([]byte(u.unit)) {
			t.Fatalf("%s: not JSON after the rewrite:\n%s", u.place, out)
		}
		left := stillPointing(t, r, u.place, out)
		if len(first.Kept) != left {
			t.Errorf("%s: first run kept %d %q, but %d references still point at migrated blobs:\n%s", u.place, len(first.Kept), first.Kept, left, out)
		}
		if before := stillPointing(t, r, u.place, []byte(u.unit)); len(first.Edits) != before-left {
			t.Errorf("%s: %d edits for %d references rewritten", u.place, len(first.Edits), before-left)
		}
		second, err := r.Find(u.place, out)
		must(t, err)
		if len(second.Edits) != 0 || len(second.Kept) != len(first.Kept) {
			t.Errorf("%s: second run edits %+v kept %q; first kept %q", u.place, second.Edits, second.Kept, first.Kept)
		}
		for _, k := range first.Kept {
			if !strings.Contains(k, "{bucket, path} pair") {
				t.Errorf("%s: kept for another reason than a pair: %s", u.place, k)
			}
		}
		total[0] += len(first.Kept)
		total[1] += len(second.Kept)
	}
	if total[0] != 3 || total[1] != total[0] {
		t.Fatalf("kept %d then %d, want the three pairs both times", total[0], total[1])
	}
}
