package ref

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/store"
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
		`"file:///srv/agent/.forge/files/inbound%2F..%2F..%2F..%2Fetc/` + h + `"`,
		`{"uri":"file:///srv/agent/.forge/files/inbound/%00` + h + `"}`,
		`{"uri":"file:///srv/agent/.forge/files/inbound/a%5C` + h + `"}`,
		`"see /srv/agent/.forge/files/inbound /srv/agent/.forge/files/inbound/` + h + `"`,
		`"at /srv/agent/.forge x/ y/files/inbound/` + h + `"`,
		`{"path":"/srv/agent/.forge/files/inbound/a b\tc.png"}`,
		`"\\n/srv/agent/.forge/files/inbound/` + h + `\\u0022"`,
	} {
		f.Add([]byte(s))
	}
	for _, c := range runtimeCases(f) {
		f.Add([]byte(c.in))
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
				// And a valid one: checking it never fails for a reason that would
				// make a run incomplete.
				if err := store.ValidKey(key); err != nil {
					t.Fatalf("%+v resolved to invalid key: %v", r, err)
				}
			}
		}
		e := &Extractor{Found: check}
		_ = e.Document(strings.NewReader(string(data)), Place{})
		e.Value(data, Place{})
	})
}

// The documents below are written the way the runtimes write them: forge with
// Go's json.MarshalIndent (so "&<>" become \u0026 \u003c \u003e), coffer's rows
// with Python's json.dumps defaults (ensure_ascii=True, separators ", " and ": ").

type forgeMedia struct {
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
}

type forgePart struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Media *forgeMedia `json:"media,omitempty"`
}

type forgeFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type forgeCall struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function forgeFunction `json:"function"`
}

type forgeMessage struct {
	Role       string      `json:"role"`
	Content    string      `json:"content,omitempty"`
	Parts      []forgePart `json:"parts,omitempty"`
	ToolCalls  []forgeCall `json:"tool_calls,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

type forgeSession struct {
	TaskID    string         `json:"task_id"`
	Messages  []forgeMessage `json:"messages"`
	Summary   string         `json:"summary,omitempty"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
}

// forgeDoc renders a session as forge's MemoryStore.Save writes it.
func forgeDoc(t testing.TB, summary string, msgs ...forgeMessage) string {
	t.Helper()
	b, err := json.MarshalIndent(forgeSession{TaskID: "t-1", Messages: msgs, Summary: summary,
		CreatedAt: "2026-07-01T10:00:00.123456Z", UpdatedAt: "2026-07-01T10:00:05.654321Z"}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func forgeImage(uri string) forgeMessage {
	return forgeMessage{Role: "user", Content: "What's in this image?", Parts: []forgePart{
		{Type: "text", Text: "What's in this image?"},
		{Type: "image", Media: &forgeMedia{MimeType: "image/png", URI: uri}}}}
}

// forgeCallArgs is an assistant turn calling a tool, its arguments compact JSON
// as the model wrote them.
func forgeCallArgs(t testing.TB, name string, args map[string]any) forgeMessage {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return forgeMessage{Role: "assistant", ToolCalls: []forgeCall{{ID: "call_1", Type: "function", Function: forgeFunction{Name: name, Arguments: string(b)}}}}
}

func said(role, content string) forgeMessage { return forgeMessage{Role: role, Content: content} }

// wantRef is one reference a case must yield, and where the resolver must place it.
type wantRef struct {
	kind Kind
	path string
	// key is the store key the reference names; "" when it must not resolve
	// inside the store.
	key string
	// status, when set, is the status it must resolve to instead.
	status Status
	// home marks a "~/…" path: the resolver places it once it knows the home
	// directory, and until then it is unanchored, never inside another key.
	home bool
}

// runtimeCase is a session value as a runtime writes it, with the references it holds.
type runtimeCase struct {
	name  string
	value bool // a column value (coffer's content TEXT), not a document
	in    string
	store string
	bases []string
	want  []wantRef
}

// runtimeCases are the spellings of paths that the real runtimes write.
func runtimeCases(t testing.TB) []runtimeCase {
	a, b, c, d := digest("a")+".png", digest("b")+".pdf", digest("c")+".gif", digest("d")+".png"
	const (
		space   = "/home/u/My Agent"
		html    = "/home/u/R&D <lab>"
		umlaut  = "/home/u/März"
		srv     = "/srv/agent"
		inbound = "/.forge/files/inbound/"
		coffer  = "/home/u/.coffer/channel-media"
	)
	return []runtimeCase{{
		name:  "forge media.uri under a folder with a space",
		in:    forgeDoc(t, "", forgeImage(space+inbound+a)),
		store: space + inbound,
		want:  []wantRef{{kind: AbsPath, path: space + inbound + a, key: a}},
	}, {
		name:  "forge media.uri under a folder with &<> (MarshalIndent's \\u0026 \\u003c \\u003e)",
		in:    forgeDoc(t, "", forgeImage(html+inbound+a)),
		store: html + inbound,
		want:  []wantRef{{kind: AbsPath, path: html + inbound + a, key: a}},
	}, {
		name:  "forge media.uri relative to the parent of a work directory with a space",
		in:    forgeDoc(t, "", forgeImage("My Agent"+inbound+a)),
		store: space + inbound, bases: []string{"/home/u"},
		want: []wantRef{{kind: RelPath, path: "My Agent" + inbound + a, key: a}},
	}, {
		name: "forge prose and tool calls naming a path with a space",
		in: forgeDoc(t, "",
			said("assistant", "I kept your upload at "+space+inbound+c+" — ask me again any time."),
			forgeCallArgs(t, "code_agent_read", map[string]any{"path": space + inbound + a}),
			forgeCallArgs(t, "cli_execute", map[string]any{"command": "file " + space + inbound + b}),
			said("tool", "Error executing tool code_agent_read: open "+space+inbound+d+": no such file or directory")),
		store: space + inbound,
		want: []wantRef{
			{kind: AbsPath, path: space + inbound + c, key: c},
			{kind: AbsPath, path: space + inbound + a, key: a},
			{kind: AbsPath, path: space + inbound + b, key: b},
			{kind: AbsPath, path: space + inbound + d, key: d},
		},
	}, {
		name:  "a path in prose whose start is not in the text: the rest is unanchored, never inside another key",
		in:    forgeDoc(t, "", said("assistant", "Saved under My Agent"+inbound+a+".")),
		store: space + inbound,
		want:  []wantRef{{kind: RelPath, path: "Agent" + inbound + a, status: Unanchored}},
	}, {
		name: "forge compaction summary: escaped and real newlines after the path",
		in: forgeDoc(t, "- [user] the contract\n- [tool_call] cli_execute\n"+
			`- [tool] {"exit_code":0,"stdout":"converted `+srv+inbound+b+`\n"}`+"\n"+
			"- [tool] converted "+srv+inbound+a+"\n- [assistant] It is a 2-page contract.\n"+
			`- [tool] "{\"stdout\":\"converted `+srv+inbound+c+`\\n\"}"`+"\n"+
			`- [tool] {"stdout":"\n`+space+inbound+d+`\n"}`,
			said("user", "the contract")),
		store: srv + inbound,
		want: []wantRef{
			{kind: AbsPath, path: srv + inbound + b, key: b},
			{kind: AbsPath, path: srv + inbound + a, key: a},
			{kind: AbsPath, path: srv + inbound + c, key: c},
			{kind: AbsPath, path: space + inbound + d},
		},
	}, {
		name: "percent-encoded file URIs as Path.as_uri(), Java and Node write them",
		in: forgeDoc(t, "",
			forgeImage("file:///home/u/My%20Agent/.forge/files/inbound/"+a),
			forgeImage("file://localhost/home/u/My%20Agent/.forge/files/inbound/"+b),
			forgeImage("file:/home/u/My%20Agent/.forge/files/inbound/"+c),
			forgeImage("file:///home/u/My%20Agent/.forge/files/inbound%2F"+d),
			said("assistant", "Saved to file:///home/u/My%20Agent/.forge/files/inbound/"+a+", see it."),
			forgeImage("file:///home/u/My Agent/.forge/files/inbound/"+b)),
		store: space + inbound,
		want: []wantRef{
			{kind: FileURI, path: space + inbound + a, key: a},
			{kind: FileURI, path: space + inbound + b, key: b},
			{kind: FileURI, path: space + inbound + c, key: c},
			{kind: FileURI, path: space + inbound + d, key: d},
			{kind: FileURI, path: space + inbound + a, key: a},
			{kind: FileURI, path: space + inbound + b, key: b},
		},
	}, {
		name:  "percent-encoded non-ASCII in a file URI",
		in:    forgeDoc(t, "", forgeImage("file:///home/u/M%C3%A4rz/.forge/files/inbound/"+a)),
		store: umlaut + inbound,
		want:  []wantRef{{kind: FileURI, path: umlaut + inbound + a, key: a}},
	}, {
		name: "malformed escapes and links are no references",
		in: forgeDoc(t, "",
			forgeImage("file:///srv/agent/.forge/files/inbound/%zz"+a),
			forgeImage("http://localhost:8080/files/inbound/"+a),
			forgeImage("https://cdn.example.com/inbound/"+b),
			said("assistant", "Open http://localhost/My Agent/"+c+" or https://host/inbound/"+d+".")),
		store: srv + inbound,
	}, {
		name: "Windows paths name no key of a local store",
		in: forgeDoc(t, "",
			forgeImage(`C:\Users\u\.forge\files\inbound\`+a),
			forgeImage(`\\server\share\inbound\`+a),
			forgeImage("C:/Users/u/.forge/files/inbound/"+a),
			forgeImage("file:///C:/Users/u/.forge/files/inbound/"+a),
			forgeImage("file://server/share/.forge/files/inbound/"+a),
			said("assistant", `saved C:\Users\u\inbound\`+b+" and D:/x/"+c)),
		store: srv + inbound,
	}, {
		name: "~/ paths keep their spelling",
		in: forgeDoc(t, "",
			forgeImage("~/.forge/files/inbound/"+a),
			forgeCallArgs(t, "cli_execute", map[string]any{"command": "file ~/.forge/files/inbound/" + b})),
		store: "/home/u/.forge/files/inbound",
		want: []wantRef{
			{kind: RelPath, path: "~/.forge/files/inbound/" + a, key: a, home: true},
			{kind: RelPath, path: "~/.forge/files/inbound/" + b, key: b, home: true},
		},
	}, {
		name:  "coffer attachment blocks: uuid hex and the user's own suffix",
		value: true,
		in: `[{"type": "text", "text": "what does this receipt say?"}, ` +
			`{"type": "attachment", "path": "/home/u/.coffer/channel-media/b0f2b5d2a7974bac81ec61502ae1fc88.\u7b2c\u4e8c\u7248", "mime": "application/octet-stream", "filename": "\u4f1a\u8bae\u7eaa\u8981.\u7b2c\u4e8c\u7248"}, ` +
			`{"type": "attachment", "path": "/home/u/.coffer/channel-media/fbe44db24d46462c8ff681980ff2477d.final copy", "mime": "application/pdf", "filename": "\u626b\u63cf\u4ef6.final copy"}, ` +
			`{"type": "attachment", "path": "/home/u/.coffer/channel-media/46917a9f0ee04a24a65d4ede7787097e.JPG", "mime": "image/jpeg", "filename": "IMG_0042.JPG"}, ` +
			`{"type": "attachment", "path": "/home/u/.coffer/channel-media/8d1a4cdc3ef34ed48293de9a65294524", "mime": "audio/mpeg", "filename": "audio"}, ` +
			`{"type": "attachment", "path": "/home/u/.coffer/channel-media/40fcf7266ece424cba17f9ce7c4a89dc.heic", "mime": "image/heic", "filename": "IMG_1234.heic"}]`,
		store: coffer,
		want: []wantRef{
			{kind: AbsPath, path: coffer + "/b0f2b5d2a7974bac81ec61502ae1fc88.第二版", key: "b0f2b5d2a7974bac81ec61502ae1fc88.第二版"},
			{kind: AbsPath, path: coffer + "/fbe44db24d46462c8ff681980ff2477d.final copy", key: "fbe44db24d46462c8ff681980ff2477d.final copy"},
			{kind: AbsPath, path: coffer + "/46917a9f0ee04a24a65d4ede7787097e.JPG", key: "46917a9f0ee04a24a65d4ede7787097e.JPG"},
			{kind: AbsPath, path: coffer + "/8d1a4cdc3ef34ed48293de9a65294524", key: "8d1a4cdc3ef34ed48293de9a65294524"},
			{kind: AbsPath, path: coffer + "/40fcf7266ece424cba17f9ce7c4a89dc.heic", key: "40fcf7266ece424cba17f9ce7c4a89dc.heic"},
		},
	}, {
		name:  "coffer tool blocks: Read's file_path, a ~/ path, a shell command, a file URI in text",
		value: true,
		in: `[{"type": "text", "text": "\u56fe\u7247\u4e2d\u7684\u6587\u5b57\u662f\uff1a\u9644\u4ef6\u662f \u8349\u7a3f.tmp (file:///home/u/.coffer/channel-media/9df6e7510c12409b9d0a061bc2b1b79a.tmp)"}, ` +
			`{"type": "tool_use", "tool_use_id": "toolu_1", "tool_name": "Read", "tool_input": {"file_path": "/home/u/.coffer/channel-media/b0f2b5d2a7974bac81ec61502ae1fc88.\u7b2c\u4e8c\u7248"}}, ` +
			`{"type": "tool_use", "tool_use_id": "toolu_2", "tool_name": "Read", "tool_input": {"file_path": "~/.coffer/channel-media/fbe44db24d46462c8ff681980ff2477d.final copy"}}, ` +
			`{"type": "tool_use", "tool_use_id": "toolu_3", "tool_name": "Bash", "tool_input": {"command": "file ~/.coffer/channel-media/fbe44db24d46462c8ff681980ff2477d.final copy && wc -c ~/.coffer/channel-media/fbe44db24d46462c8ff681980ff2477d.final copy", "description": "\u68c0\u67e5\u9644\u4ef6\u7c7b\u578b"}}, ` +
			`{"type": "tool_result", "tool_use_id": "toolu_3", "tool_name": "Bash", "output": {"stdout": "/\u2026/fbe44db24d46462c8ff681980ff2477d.final copy: data\n4096 /home/u/.coffer/channel-media/fbe44db24d46462c8ff681980ff2477d.final copy\n"}, "error": null}]`,
		store: coffer,
		want: []wantRef{
			{kind: FileURI, path: coffer + "/9df6e7510c12409b9d0a061bc2b1b79a.tmp", key: "9df6e7510c12409b9d0a061bc2b1b79a.tmp"},
			{kind: AbsPath, path: coffer + "/b0f2b5d2a7974bac81ec61502ae1fc88.第二版", key: "b0f2b5d2a7974bac81ec61502ae1fc88.第二版"},
			{kind: RelPath, path: "~/.coffer/channel-media/fbe44db24d46462c8ff681980ff2477d.final copy", key: "fbe44db24d46462c8ff681980ff2477d.final copy", home: true},
		},
	}, {
		name:  "coffer prose: a file URI written with the spaces of its folder unescaped",
		value: true,
		in:    `[{"type": "text", "text": "\u56fe\u7247\u662f \u8349\u7a3f.tmp (file:///home/u/My Agent/.coffer/channel-media/9df6e7510c12409b9d0a061bc2b1b79a.tmp)"}]`,
		store: space + "/.coffer/channel-media",
		want: []wantRef{
			{kind: FileURI, path: space + "/.coffer/channel-media/9df6e7510c12409b9d0a061bc2b1b79a.tmp", key: "9df6e7510c12409b9d0a061bc2b1b79a.tmp"},
		},
	}, {
		name: "a file name before a space ends a path: two paths in a command",
		in: forgeDoc(t, "",
			forgeCallArgs(t, "cli_execute", map[string]any{"command": "cp /tmp/upload.png files/inbound/" + a + " && ls " + space + inbound}),
			said("assistant", "See file:///tmp/a.png and files/inbound/"+b+".")),
		store: space + inbound,
		want: []wantRef{
			{kind: RelPath, path: "files/inbound/" + a, key: a},
			{kind: FileURI, path: "/tmp/a.png", status: Outside},
			{kind: RelPath, path: "files/inbound/" + b, key: b},
		},
	}, {
		name:  "coffer prose: curly quotes and a full-width colon around a path (ensure_ascii)",
		value: true,
		in:    `[{"type": "text", "text": "\u4fdd\u5b58\u5728\uff1a/srv/agent/.forge/files/inbound/` + a + `\uff0c\u201c/srv/agent/.forge/files/inbound/` + b + `\u201d"}]`,
		store: srv + inbound,
		want: []wantRef{
			{kind: AbsPath, path: srv + inbound + a, key: a},
			{kind: AbsPath, path: srv + inbound + b, key: b},
		},
	}}
}

func TestExtractRuntimeSpellings(t *testing.T) {
	for _, tc := range runtimeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			var got []Reference
			e := &Extractor{Found: func(r Reference, _ Place) { got = append(got, r) }}
			if tc.value {
				e.Value([]byte(tc.in), Place{})
			} else if err := e.Document(strings.NewReader(tc.in), Place{}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d references, want %d:\n%+v", len(got), len(tc.want), got)
			}
			res := NewLocalResolver(tc.store, nil, tc.bases)
			for i, w := range tc.want {
				r := got[i]
				if r.Kind != w.kind || r.Path != w.path {
					t.Errorf("reference %d: got %v %q, want %v %q", i, r.Kind, r.Path, w.kind, w.path)
					continue
				}
				st, key := res.Resolve(r)
				switch {
				case w.home && st == Unanchored:
				case w.key != "":
					if st != Inside || key != w.key {
						t.Errorf("reference %d %q resolves to %v %q, want inside %q", i, r.Path, st, key, w.key)
					}
				case w.status != 0:
					if st != w.status {
						t.Errorf("reference %d %q resolves to %v, want %v", i, r.Path, st, w.status)
					}
				case st == Inside:
					t.Errorf("reference %d %q resolves inside, to %q", i, r.Path, key)
				}
			}
		})
	}
}

// TestExtractExactNames: a location value is the whole name the runtime
// wrote. Coffer names a download by uuid4().hex and the user's own suffix,
// whatever it is: a trailing space or no-break space, '#', '?', '&', '%',
// quotes. A relative link's "img.png?v=2" stays no reference, and a value
// ending in a line break is trimmed.
func TestExtractExactNames(t *testing.T) {
	const dir = "/home/u/.coffer/channel-media/"
	for _, name := range []string{
		"0425eb9f0425eb9f0425eb9f0425eb46.pdf ",
		"0425eb9f0425eb9f0425eb9f0425eb46.pdf\u00a0",
		"59e8372e59e8372e59e8372e59e8a5dd.v1#draft?x=1",
		"59e8372e59e8372e59e8372e59e8a5dd.a&b 100%",
		`59e8372e59e8372e59e8372e59e8a5dd.it's "q"`,
	} {
		quoted, _ := json.Marshal(dir + name)
		got := extractDoc(t, `{"type": "attachment", "path": `+string(quoted)+`}`)
		if len(got) != 1 || got[0].Raw != dir+name {
			t.Errorf("%q: got %v, want the whole name", name, got)
		}
	}
	for _, doc := range []string{`{"src": "img.png?v=2"}`, `{"path": "#top"}`} {
		if got := extractDoc(t, doc); len(got) != 0 {
			t.Errorf("%s: %v, want no reference", doc, got)
		}
	}
	got := extractDoc(t, `{"path": "`+dir+`a.pdf\n"}`)
	if len(got) != 1 || got[0].Raw != dir+"a.pdf" {
		t.Errorf("a value ending in a line break: %v", got)
	}
}
