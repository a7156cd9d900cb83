package retaintest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An Encoding is one way a writer escapes text, as its own code writes it.
// The retention rule claims that no stack of these, in any order and of any
// depth, hides a name (package retain's FuzzEncodingStack).
type Encoding struct {
	Name   string
	Encode func(string) string
}

// Encodings are the escapings the rule is tested against.
var Encodings = []Encoding{
	{"json-go", func(s string) string { b, _ := json.Marshal(s); return string(b) }},
	{"json-python", func(s string) string { return Quote(s, PythonASCII) }},
	{"json-escaped-slash", func(s string) string { return Quote(s, EscapedSlash) }},
	// Python's html.escape and Go's html.EscapeString: &amp; &lt; &#x27; …
	{"html-escape", html.EscapeString},
	{"html-python", pythonHTMLEscape},
	// Every non-ASCII character as a named or numeric character reference,
	// as HTML tidy and XML writers with an ASCII encoding do.
	{"html-entities", entities},
	{"xml-text", xmlText},
	// Python's urllib.parse.urlencode / quote_plus: a space is '+'.
	{"form", url.QueryEscape},
	{"percent-path", url.PathEscape},
	// JavaScript's encodeURIComponent.
	{"percent-component", encodeURIComponent},
	// Python's repr() of a str and ascii() of it.
	{"python-repr", func(s string) string { return pythonRepr(s, false) }},
	{"python-ascii", func(s string) string { return pythonRepr(s, true) }},
	// Python's repr() of the UTF-8 bytes: b'M\xc3\xa4rz'.
	{"python-bytes", pythonBytesRepr},
	{"go-quote", strconv.Quote},
	{"go-quote-ascii", strconv.QuoteToASCII},
	{"shlex-quote", ShlexQuote},
	{"shell-backslash", ShellEscape},
	{"markdown-v2", MarkdownV2},
	{"csv", func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }},
	{"sql-literal", func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }},
}

// xmlText is encoding/xml's EscapeText: &#34; &#39; &amp; &lt; &gt; and
// &#x9; &#xA; &#xD;.
func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// pythonHTMLEscape is Python's html.escape(s, quote=True).
func pythonHTMLEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(s)
}

// entities writes markup characters and every non-ASCII character as a
// character reference: named where HTML has a common name, else decimal or
// hexadecimal.
func entities(s string) string {
	named := map[rune]string{'ä': "auml", 'ö': "ouml", 'ü': "uuml", 'é': "eacute", ' ': "nbsp", '…': "hellip", '\'': "apos", '&': "amp", '<': "lt", '>': "gt", '"': "quot"}
	var b strings.Builder
	for i, r := range s {
		switch n, ok := named[r]; {
		case ok:
			b.WriteString("&" + n + ";")
		case r >= utf8.RuneSelf && i%2 == 0:
			fmt.Fprintf(&b, "&#%d;", r)
		case r >= utf8.RuneSelf:
			fmt.Fprintf(&b, "&#x%X;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// pythonRepr is Python 3's repr() of a str (ascii: its ascii()): single
// quotes unless the text holds one and no double quote; \\, \n, \r, \t;
// other control characters as \xNN; with ascii every non-ASCII character as
// \xNN, \uNNNN or \UNNNNNNNN.
func pythonRepr(s string, ascii bool) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || ascii && r >= 0x80 && r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case ascii && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case ascii && r >= 0x100:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pythonBytesRepr is Python 3's repr() of s.encode().
func pythonBytesRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}
