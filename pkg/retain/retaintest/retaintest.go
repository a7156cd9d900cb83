// Package retaintest holds the retention conformance table: blob names as the
// real runtimes name them, each named by a session in every spelling a runtime
// may write — its serializer's escapes, JSON inside a string inside a string,
// a member name, a number, percent-encoded URIs, the other Unicode
// normalization — at the places of a session document where runtimes put
// them. Every session source kind runs the same table unchanged (pkg/gc's
// conformance test): whatever the source, every planted blob must be kept.
//
// The spellings follow the real serializers:
//
//   - GoJSON is encoding/json (forge's json.MarshalIndent): '<', '>' and '&'
//     as \u003c \u003e \u0026, U+2028/U+2029 escaped, other non-ASCII raw.
//   - PythonASCII is Python's json.dumps defaults (coffer): ensure_ascii, so
//     every non-ASCII character is \uXXXX (lower-case hex, surrogate pairs
//     above U+FFFF), separators ", " and ": ".
//   - EscapedSlash is PHP's json_encode and some Java encoders: "\/" for
//     every slash, and \uXXXX for non-ASCII.
package retaintest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Style is how a JSON string is written.
type Style int

const (
	GoJSON Style = iota
	PythonASCII
	EscapedSlash
)

// Styles are every Style, for tables.
var Styles = []Style{GoJSON, PythonASCII, EscapedSlash}

func (s Style) String() string {
	return [...]string{"go", "python", "escaped-slash"}[s]
}

// Quote returns s as a JSON string token (with its quotes) written in style.
func Quote(s string, style Style) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == '/' && style == EscapedSlash:
			b.WriteString(`\/`)
		case (r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029) && style == GoJSON:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= utf8.RuneSelf && style != GoJSON:
			if r > 0xFFFF {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Object writes a JSON object of members whose values are already JSON, in the
// style's separators.
func Object(style Style, members ...string) string {
	sep, colon := ",", ":"
	if style == PythonASCII {
		sep, colon = ", ", ": "
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(members); i += 2 {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(Quote(members[i], style) + colon + members[i+1])
	}
	b.WriteByte('}')
	return b.String()
}

// Case is one planted reference: a blob, and a session document that names it.
type Case struct {
	Name string // for test output: "python/embedded-2/coffer-cjk/file-uri"
	Blob string // the blob's key in a flat store
	Doc  string // a JSON document naming it
}

// blobKind is a way runtimes name their files.
type blobKind struct {
	name string
	// blob makes the file's name from a unique hex string; spell makes the
	// name as the session spells it (another normalization, say).
	blob  func(u string) string
	spell func(name string) string
}

func same(s string) string { return s }

var nfdName = norm.NFD.String("März")

var blobKinds = []blobKind{
	{"forge-sha", func(u string) string { return sha(u) + ".png" }, same},
	{"coffer-cjk", func(u string) string { return u[:32] + ".第二版" }, same},
	{"coffer-space", func(u string) string { return u[:32] + ".final copy" }, same},
	{"coffer-noext", func(u string) string { return u[:32] }, same},
	{"coffer-upper", func(u string) string { return u[:32] + ".JPG" }, same},
	{"coffer-quote", func(u string) string { return u[:32] + ".v2 (Bob's edit)" }, same},
	// The user's file was "scan.pdf " (a trailing space), or carried a
	// fragment and a query in its name.
	{"coffer-trailing-space", func(u string) string { return u[:32] + ".pdf " }, same},
	{"coffer-fragment", func(u string) string { return u[:32] + ".v1#draft?x=1&y=100%" }, same},
	// The file is named in NFD (macOS), the session in NFC, and the reverse.
	{"nfd-file", func(u string) string { return u[:12] + "-" + nfdName + ".pdf" }, norm.NFC.String},
	{"nfc-file", func(u string) string { return u[:12] + "-März.pdf" }, norm.NFD.String},
	{"ampersand", func(u string) string { return u[:12] + "-a&b<c>.png" }, same},
}

// refForm turns a spelled name into the text that holds it.
type refForm struct {
	name string
	ref  func(name string) string
}

var refForms = []refForm{
	{"abs-space", func(n string) string { return "/srv/My Agent & Co/.forge/files/inbound/" + n }},
	{"relocated", func(n string) string { return "/old/home/agent/.forge/files/inbound/" + n }},
	{"file-uri", func(n string) string { return "file:///home/u/My%20Agent/" + url.PathEscape(n) }},
	{"file-uri-2f", func(n string) string { return "file:///home/u/inbound%2F" + url.PathEscape(n) }},
	{"localhost-url", func(n string) string { return "http://localhost:8080/files/" + url.PathEscape(n) }},
	{"home", func(n string) string { return "~/.coffer/channel-media/" + n }},
	{"bare", same},
	// A tool call's shell command, the name's spaces and shell characters
	// escaped with backslashes, as a command that runs must write them.
	{"shell-escaped", func(n string) string { return "pdftotext ~/.coffer/channel-media/" + ShellEscape(n) + " -" }},
	// The same command as Python's shlex.quote writes it: the whole path in
	// single quotes, a quote in it as '"'"'.
	{"shlex-quoted", func(n string) string { return "pdftotext " + ShlexQuote("/home/u/.coffer/channel-media/"+n) + " -" }},
	// A link whose query is form-encoded (Python's urllib.parse.urlencode,
	// JavaScript's URLSearchParams): a space is '+'.
	{"form-encoded", func(n string) string {
		return "http://127.0.0.1:8765/media?" + url.Values{"path": {"/home/u/.coffer/channel-media/" + n}}.Encode()
	}},
	// A Telegram reply in MarkdownV2, escaped as python-telegram-bot's
	// escape_markdown(text, version=2) does: a backslash before each of
	// _*[]()~`>#+-=|{}.!
	{"markdown-v2", func(n string) string { return MarkdownV2("Saved as ~/.coffer/channel-media/" + n) }},
	// An HTML page or a rich-text message stored as markup: every
	// non-ASCII character and markup character as a character reference.
	{"html-entities", func(n string) string { return `<img alt="upload" src="/media/` + entities(n) + `">` }},
	{"xml-text", func(n string) string { return "<file>" + xmlText("/srv/uploads/"+n) + "</file>" }},
	// A tool's output printed by Python: repr() of the path's bytes, and
	// ascii() of the text.
	{"python-bytes", func(n string) string { return "read " + pythonBytesRepr("/home/u/.coffer/channel-media/"+n) }},
	{"python-ascii", func(n string) string { return "open(" + pythonRepr("/home/u/.coffer/channel-media/"+n, true) + ")" }},
	// A login redirect to a form-encoded link: the link form-encoded again
	// ("+" as %2B, "%" as %25).
	{"form-nested", func(n string) string {
		return "/login?" + url.Values{"next": {"/view?" + url.Values{"path": {"/srv/uploads/" + n}}.Encode()}}.Encode()
	}},
}

// ShlexQuote is Python's shlex.quote: a word of only safe characters as it
// is, anything else in single quotes, each ' in it as '"'"'.
func ShlexQuote(s string) string {
	safe := true
	for _, r := range s {
		if !(r < utf8.RuneSelf && (r == '_' || r == '@' || r == '%' || r == '+' || r == '=' || r == ':' || r == ',' || r == '.' || r == '/' || r == '-' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')) {
			safe = false
			break
		}
	}
	if safe && s != "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// MarkdownV2 escapes text as python-telegram-bot's escape_markdown with
// version=2.
func MarkdownV2(text string) string {
	var b strings.Builder
	for _, r := range text {
		if strings.ContainsRune("_*[]()~`>#+-=|{}.!", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ShellEscape writes name as one unquoted shell word: a backslash before each
// character a POSIX shell would read otherwise.
func ShellEscape(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(" \t!\"#$&'()*;<>?[]`{|}~\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// position places a reference text in a document, in a style.
type position struct {
	name string
	doc  func(ref string, style Style) string
}

// embed wraps inner JSON into a tool call's "arguments" string depth times.
func embed(inner string, depth int, style Style) string {
	for range depth {
		inner = Object(style, "name", Quote("read", style), "arguments", Quote(inner, style))
	}
	return inner
}

func message(style Style, members ...string) string {
	return Object(style, "task_id", Quote("t-1", style), "messages", "["+Object(style, members...)+"]")
}

var positions = []position{
	// coffer's content block for a file: the path with more members after
	// it (stored as SQLite JSONB, the next key's header follows the name).
	{"attachment", func(r string, st Style) string {
		return "[" + Object(st, "type", Quote("attachment", st), "path", Quote(r, st), "mime", Quote("image/jpeg", st), "filename", Quote("photo.jpg", st)) + "]"
	}},
	{"uri", func(r string, st Style) string {
		return message(st, "role", Quote("user", st), "parts", "["+Object(st, "type", Quote("image", st), "media", Object(st, "uri", Quote(r, st)))+"]")
	}},
	{"prose", func(r string, st Style) string {
		return message(st, "role", Quote("assistant", st), "content", Quote("I saved it as "+r+".\nDone.", st))
	}},
	{"summary-newline", func(r string, st Style) string {
		return Object(st, "summary", Quote("Earlier: the user sent "+r+"\n- asked for a crop", st))
	}},
	{"member-name", func(r string, st Style) string {
		return message(st, "role", Quote("user", st), "attachments", Object(st, r, Object(st, "mime", Quote("image/png", st))))
	}},
	{"embedded-1", func(r string, st Style) string {
		return message(st, "role", Quote("assistant", st), "tool_calls", "["+embed(Object(st, "path", Quote(r, st)), 1, st)+"]")
	}},
	{"embedded-2", func(r string, st Style) string {
		return message(st, "role", Quote("assistant", st), "tool_calls", "["+embed(Object(st, "path", Quote(r, st)), 2, st)+"]")
	}},
	{"embedded-3", func(r string, st Style) string {
		return message(st, "role", Quote("assistant", st), "tool_calls", "["+embed(Object(st, "path", Quote(r, st)), 3, st)+"]")
	}},
	// Past any depth a decoder would follow: the rule decodes nothing.
	{"embedded-8", func(r string, st Style) string {
		return message(st, "role", Quote("assistant", st), "tool_calls", "["+embed(Object(st, "path", Quote(r, st)), 8, st)+"]")
	}},
	{"escaped-fragment", func(r string, st Style) string {
		// Free text holding an escaped JSON fragment: a tool's output pasted
		// into prose, so the name is escaped twice in the file.
		frag := `{"path": ` + Quote(r, st) + `}`
		return message(st, "role", Quote("tool", st), "content", Quote("Tool output: "+frag+" (done)", st))
	}},
}

// Cases returns the table: every blob kind × reference form × position ×
// style, each with a blob name of its own, plus the cases that only some
// kinds have (a number literal, a digest in another case).
func Cases() []Case {
	var out []Case
	n := 0
	unique := func() string {
		n++
		s := sha256.Sum256([]byte(fmt.Sprint("reftest-", n)))
		return hex.EncodeToString(s[:])
	}
	for _, st := range Styles {
		for _, k := range blobKinds {
			for _, f := range refForms {
				for _, p := range positions {
					blob := k.blob(unique())
					out = append(out, Case{
						Name: st.String() + "/" + p.name + "/" + k.name + "/" + f.name,
						Blob: blob,
						Doc:  p.doc(f.ref(k.spell(blob)), st),
					})
				}
			}
		}
		// A number names a file: {"media_id": 1234567890} keeps 1234567890.jpg.
		num := fmt.Sprint(1_000_000_000 + n)
		unique()
		out = append(out, Case{st.String() + "/number", num + ".jpg", message(st, "role", Quote("user", st), "media_id", num)})
		// The same as a float, as Python's json.dumps writes a float and
		// JavaScript's JSON.stringify a large one: 1234567890.0, 1.23456789e+21.
		num = fmt.Sprint(1_000_000_000 + n + 1)
		out = append(out, Case{st.String() + "/float", num + ".jpg", message(st, "role", Quote("user", st), "media_id", num+".0")})
		unique()
		big := uint64(1_000_000_000_000_000_000) + uint64(n)*1_000_000_000_000
		out = append(out, Case{st.String() + "/exponent", fmt.Sprint(big) + ".jpg", message(st, "role", Quote("user", st), "media_id", strconv.FormatFloat(float64(big), 'e', -1, 64))})
		unique()
		// A digest in upper case, in prose.
		d := sha(unique())
		out = append(out, Case{st.String() + "/upper-digest", d + ".webp", message(st, "content", Quote("sha256:"+strings.ToUpper(d)+" uploaded", st))})
	}
	return out
}

// Control is a blob name no case names: a test plants it too and expects it
// to be a candidate, so that a source that kept everything would fail.
func Control() string { return sha("reftest-control") + ".png" }

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
