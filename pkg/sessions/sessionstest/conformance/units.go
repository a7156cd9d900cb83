package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Unit is one session unit the suite plants: a session file, an object, or
// the value of one row's column. A fixture stores it in the shape its source
// keeps sessions (JSON for a document or a column, JSONL for a JSON Lines
// transcript), byte for byte.
type Unit struct {
	// ID names the unit ("t-0003") and appears once in each of its shapes,
	// which is how the suite tells units apart in what a walk yields.
	ID string
	// JSON is the session as one JSON value: forge's session file
	// (encoding/json's MarshalIndent: "&", "<", ">" as \u0026, \u003c,
	// \u003e) for even units, coffer's message content (Python's json.dumps:
	// ensure_ascii, ", " and ": ") for odd ones.
	JSON string
	// JSONL is the same session as JSON Lines, one record a line, each
	// written by the same serializer, as a runtime appends its transcript.
	JSONL string
	// Ref is the blob reference the unit holds, written without escapes in
	// every shape (and raw in SQLite JSONB): the rewrite cases replace it by
	// Alt.
	Ref string
	// Alt is what the rewrite cases write in place of Ref: a bucket URL of
	// the same length, so that a value whose encoding counts its bytes
	// (SQLite JSONB's headers) stays well formed.
	Alt string
}

// refHome is the start of every Ref; altHome, of the same length, replaces it.
const (
	refHome = "/home/user/"
	altHome = "s3://media/"
)

// Units returns the n units the suite plants, alternately forge's and
// coffer's.
func Units(n int) []Unit {
	us := make([]Unit, n)
	for i := range us {
		id := fmt.Sprintf("t-%04d", i)
		if i%2 == 0 {
			us[i] = forgeUnit(id)
		} else {
			us[i] = cofferUnit(id)
		}
		us[i].ID = id
		us[i].Alt = altHome + strings.TrimPrefix(us[i].Ref, refHome)
	}
	return us
}

type forgeMedia struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mime_type"`
}

type forgePart struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Media *forgeMedia `json:"media,omitempty"`
}

type forgeMessage struct {
	Role  string      `json:"role"`
	Parts []forgePart `json:"parts"`
}

type forgeSession struct {
	TaskID   string         `json:"task_id"`
	Title    string         `json:"title"`
	Messages []forgeMessage `json:"messages"`
}

// forgeUnit is a forge session file: MarshalIndent with two spaces, a
// caption whose "&" and "<>" encoding/json escapes, non-ASCII text raw.
func forgeUnit(id string) Unit {
	d := sha256.Sum256([]byte(id))
	r := refHome + ".forge/files/inbound/" + hex.EncodeToString(d[:]) + ".png"
	msgs := []forgeMessage{
		{Role: "user", Parts: []forgePart{
			{Type: "text", Text: "Cats & dogs <draft> — größer, bitte"},
			{Type: "image", Media: &forgeMedia{URI: r, MIMEType: "image/png"}},
		}},
		{Role: "assistant", Parts: []forgePart{{Type: "text", Text: "Done: the crop of " + id + " is saved."}}},
	}
	doc, err := json.MarshalIndent(forgeSession{TaskID: id, Title: "Crop & resize", Messages: msgs}, "", "  ")
	if err != nil {
		panic(err)
	}
	var lines strings.Builder
	for i, m := range msgs {
		rec := struct {
			TaskID  string       `json:"task_id"`
			Seq     int          `json:"seq"`
			Message forgeMessage `json:"message"`
		}{id, i, m}
		b, err := json.Marshal(rec)
		if err != nil {
			panic(err)
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	return Unit{JSON: string(doc), JSONL: lines.String(), Ref: r}
}

// cofferUnit is coffer's message content: a list of content blocks as
// Python's json.dumps writes them.
func cofferUnit(id string) Unit {
	d := sha256.Sum256([]byte(id))
	r := refHome + ".coffer/channel-media/" + hex.EncodeToString(d[:16]) + ".jpg"
	text := pyObject("type", pyQuote("text"), "text", pyQuote("Qu'est-ce que c'est, "+id+"? café 🐱 & <b>"))
	att := pyObject("type", pyQuote("attachment"), "path", pyQuote(r), "mime", pyQuote("image/jpeg"), "filename", pyQuote("photo.jpg"))
	doc := "[" + text + ", " + att + "]"
	lines := pyObject("id", pyQuote(id+"-1"), "role", pyQuote("user"), "content", "["+text+"]") + "\n" +
		pyObject("id", pyQuote(id+"-2"), "role", pyQuote("user"), "content", "["+att+"]") + "\n"
	return Unit{JSON: doc, JSONL: lines, Ref: r}
}

// pyQuote is a JSON string as Python's json.dumps writes it by default
// (ensure_ascii: every non-ASCII character as \uXXXX in lower-case hex,
// surrogate pairs above U+FFFF).
func pyQuote(s string) string {
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
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= utf8.RuneSelf && r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		case r >= utf8.RuneSelf:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyObject is a JSON object of name, value pairs (values already JSON) with
// Python's default separators.
func pyObject(members ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(members); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyQuote(members[i]) + ": " + members[i+1])
	}
	b.WriteByte('}')
	return b.String()
}
