// Package ref is mediactl's reference model: what a session says about a blob,
// where it says it, and whether that points inside a store.
//
// A reference is untrusted input. Resolution is lexical and rooted: it never
// touches the file system, never follows a link, and a reference that would leave
// the store root (an absolute path elsewhere, "…/inbound/../../etc/x") resolves to
// [Outside] and is never acted on.
//
// Extraction ([Extractor]) finds explicit references — paths, file:// URIs,
// bucket URLs and {bucket, path} pairs — and reports each with its exact place,
// so that scan can name a dangling reference precisely and migrate can rewrite
// it. Whether a blob is still in use is not decided here but by the retention
// rule of package retain, which errs toward keeping (a blob counts as in use
// when any session string names it at all): a false "referenced" only keeps a
// blob; a false "unreferenced" would lose data.
package ref

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind says how a reference names its blob.
type Kind uint8

const (
	AbsPath    Kind = iota + 1 // /srv/agent/.forge/files/inbound/ab….png
	RelPath                    // .forge/files/inbound/ab….png, ./ab….png
	FileURI                    // file:///srv/agent/…
	BucketURL                  // s3://bucket/key, gs://…, azblob://…
	BucketPair                 // {"bucket": "b", "path": "k"} in one JSON object
)

var kindNames = [...]string{AbsPath: "path", RelPath: "relative", FileURI: "file-uri", BucketURL: "bucket-url", BucketPair: "bucket-pair"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText makes kinds readable in JSON output.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Reference is one mention of a blob in a session.
type Reference struct {
	Raw  string `json:"raw"` // the text exactly as found (a pair is rendered "bucket:path")
	Kind Kind   `json:"kind"`
	// Path is the path part: the file path for AbsPath, RelPath and FileURI (as
	// written, decoded from URI escapes), the object key for BucketURL and BucketPair.
	Path string `json:"path"`
	// Scheme and Bucket name the bucket for BucketURL ("s3", "media") and
	// BucketPair (Scheme empty).
	Scheme string `json:"scheme,omitempty"`
	Bucket string `json:"bucket,omitempty"`
}

// Clone returns r with strings of its own: a reference FoundAt was given
// outlives the call only as a clone.
func (r Reference) Clone() Reference {
	c := Reference{Raw: strings.Clone(r.Raw), Kind: r.Kind, Path: r.Path, Scheme: strings.Clone(r.Scheme), Bucket: strings.Clone(r.Bucket)}
	if r.Path == r.Raw {
		c.Path = c.Raw // most paths are their reference's whole text
	} else {
		c.Path = strings.Clone(r.Path)
	}
	return c
}

// Place is where a reference, string or error was found. Fields that do not apply
// to the source kind are empty.
type Place struct {
	Source   string `json:"source"`             // the session source as given on the command line
	Document string `json:"document,omitempty"` // file path or object key
	Table    string `json:"table,omitempty"`    // SQL table, or "query"
	Key      string `json:"key,omitempty"`      // SQL row key (primary key values, or the query's first column)
	Column   string `json:"column,omitempty"`   // SQL column
	// Pointer is the RFC 6901 JSON pointer to the string inside the document or
	// column value. Where the string is itself JSON embedded in a string (a tool
	// call's "arguments"), the pointer inside it follows after a "!":
	// "/messages/1/tool_calls/0/function/arguments!/path".
	Pointer string `json:"pointer,omitempty"`
	// Offset is the byte offset in the document where the value starts (for an
	// error, where parsing stopped); -1 when unknown.
	Offset int64 `json:"offset"`
}

// String renders a place for people: "sessions/t-1.json#/messages/0/parts/1/media/uri"
// or "messages[id=42].metadata#/attachments/0".
func (p Place) String() string {
	var b strings.Builder
	switch {
	case p.Table != "":
		b.WriteString(p.Table)
		if p.Key != "" {
			b.WriteString("[" + p.Key + "]")
		}
		if p.Column != "" {
			b.WriteString("." + p.Column)
		}
	case p.Document != "":
		b.WriteString(p.Document)
	default:
		b.WriteString(p.Source)
	}
	if p.Pointer != "" {
		b.WriteString("#" + p.Pointer)
	} else if p.Offset >= 0 && p.Table == "" {
		fmt.Fprintf(&b, " (offset %d)", p.Offset)
	}
	return b.String()
}
