package ref

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"testing"
)

func digest(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

type hit struct {
	Raw, Kind, Pointer string
}

func extractDoc(t *testing.T, doc string) []hit {
	t.Helper()
	var got []hit
	e := &Extractor{Found: func(r Reference, p Place) {
		got = append(got, hit{r.Raw, r.Kind.String(), p.Pointer})
	}}
	if err := e.Document(strings.NewReader(doc), Place{Source: "s", Document: "d.json"}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestExtractForgeSession(t *testing.T) {
	a, b, c, d := digest("a")+".png", digest("b")+".pdf", digest("c")+".jpg", digest("d")+".gif"
	doc := fmt.Sprintf(`{
  "task_id": "t-1",
  "messages": [
    {"role": "user", "content": "What's in this image?",
     "parts": [
       {"type": "text", "text": "What's in this image?"},
       {"type": "image", "media": {"mimeType": "image/png", "uri": "/srv/agent/.forge/files/inbound/%s"}},
       {"type": "document", "media": {"mimeType": "application/pdf", "uri": ".forge/files/inbound/%s"}},
       {"type": "image", "media": {"mimeType": "image/jpeg", "uri": "./%s"}}]},
    {"role": "assistant", "content": "Saved a copy to file:///srv/agent/.forge/files/inbound/%s, see it.",
     "tool_calls": [{"id": "c1", "type": "function",
       "function": {"name": "read_file", "arguments": "{\"path\": \"/srv/agent/.forge/files/inbound/%s\", \"n\": 2}"}}]}
  ]
}`, a, b, c, d, a)
	got := extractDoc(t, doc)
	want := []hit{
		{"/srv/agent/.forge/files/inbound/" + a, "path", "/messages/0/parts/1/media/uri"},
		{".forge/files/inbound/" + b, "relative", "/messages/0/parts/2/media/uri"},
		{"./" + c, "relative", "/messages/0/parts/3/media/uri"},
		{"file:///srv/agent/.forge/files/inbound/" + d, "file-uri", "/messages/1/content"},
		{"/srv/agent/.forge/files/inbound/" + a, "path", "/messages/1/tool_calls/0/function/arguments!/path"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}

func TestExtractCofferBlocksAndPairs(t *testing.T) {
	// coffer: a column holding a JSON array of blocks, with opaque names.
	var got []hit
	e := &Extractor{Found: func(r Reference, p Place) { got = append(got, hit{r.Raw, r.Kind.String(), p.Pointer}) }}
	e.Value([]byte(`[{"type":"text","text":"look"},{"type":"attachment","path":"/home/u/.coffer/channel-media/4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg","mime":"image/jpeg","filename":"photo.jpg"}]`), Place{})
	// agent-runs: {bucket, path} in JSONB metadata, path before or after bucket.
	e.Value([]byte(`{"attachments":[{"type":"binary","bucket":"b","path":"agent-inputs/u/t/uploads/f.png","mime":"image/png"},{"path":"agent-inputs/u/t/uploads/g.png","bucket":"b"}]}`), Place{})
	want := []hit{
		{"/home/u/.coffer/channel-media/4f1c2a7e9b0d4a55a1c2d3e4f5a6b7c8.jpg", "path", "/1/path"},
		{"b:agent-inputs/u/t/uploads/f.png", "bucket-pair", "/attachments/0/path"},
		{"b:agent-inputs/u/t/uploads/g.png", "bucket-pair", "/attachments/1/path"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}

func TestExtractIgnoresNonReferences(t *testing.T) {
	doc := `{"content": "I/O is hard; see http://example.com/a.png and a/b",
	         "path": "messages", "url": "https://x.supabase.co/storage/v1/object/sign/b/k.png?token=1",
	         "filename": "photo.jpg", "text": "{ not json }", "uri": "#anchor"}`
	if got := extractDoc(t, doc); len(got) != 0 {
		t.Fatalf("unexpected references: %v", got)
	}
}

func TestExtractBucketURLsAndWords(t *testing.T) {
	h := digest("x") + ".png"
	doc := fmt.Sprintf(`["s3://media/agent-inputs/u/%s", "gs://b/k.pdf", "copied to azblob://c/k.png, done", "see (/tmp/inbound/%s).", "/etc/passwd"]`, h, h)
	got := extractDoc(t, doc)
	want := []hit{
		{"s3://media/agent-inputs/u/" + h, "bucket-url", "/0"},
		{"gs://b/k.pdf", "bucket-url", "/1"},
		{"azblob://c/k.png", "bucket-url", "/2"},
		{"/tmp/inbound/" + h, "path", "/3"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
}

func TestTextSeesEveryString(t *testing.T) {
	var texts []string
	e := &Extractor{Found: func(Reference, Place) {}, Text: func(s []byte) { texts = append(texts, string(s)) }}
	// Member names and numbers too, and the strings of embedded JSON decoded
	// with their own escapes.
	if err := e.Document(strings.NewReader(`{"a":"x","b":["y",{"bucket":"z","path":"w"}],"n":12,"e":"{\"k\":\"\\u7b2c\"}"}`), Place{}); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(texts), `[a x b y bucket z path w n 12 e {"k":"\u7b2c"} k 第]`; got != want {
		t.Fatalf("texts %v, want %v", got, want)
	}
}

func TestTruncatedDocumentReportsWhatCameBefore(t *testing.T) {
	h := digest("t") + ".png"
	var n int
	e := &Extractor{Found: func(Reference, Place) { n++ }}
	err := e.Document(strings.NewReader(`{"messages":[{"uri":"/x/`+h+`"},{"uri":"/x/`), Place{})
	if !IsSyntax(err) || n != 1 {
		t.Fatalf("err=%v n=%d", err, n)
	}
}

func FuzzExtract(f *testing.F) {
	h := digest("f") + ".png"
	for _, s := range []string{
		`{"uri":"/srv/inbound/` + h + `"}`,
		`{"a":"{\"path\":\"../../etc/` + h + `\"}"}`,
		`[{"bucket":"b","path":"p/../../x"}]`,
		`"file:///srv/inbound/..%2f..%2fetc/passwd"`,
		`"s3://b/../../k"`,
		"\"/srv/inbound/\xff" + h + "\"",
	} {
		f.Add([]byte(s))
	}
	local := NewLocalResolver("/srv/agent/.forge/files/inbound", nil, []string{"/srv/agent"})
	bucket := NewBucketResolver("s3", "b", "agent-inputs/")
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(r Reference, p Place) {
			for _, res := range []*Resolver{local, bucket} {
				st, key := res.Resolve(r)
				if st != Inside {
					continue
				}
				// An inside key is a clean relative path: it cannot leave the root.
				if key == "" || strings.HasPrefix(key, "/") || path.Clean(key) != key || key == ".." || strings.HasPrefix(key, "../") || strings.HasPrefix(key, ".mediactl") {
					t.Fatalf("%+v resolved to unsafe key %q", r, key)
				}
			}
		}
		e := &Extractor{Found: check}
		_ = e.Document(strings.NewReader(string(data)), Place{})
		e.Value(data, Place{})
	})
}
