// Package owner says who owns each session unit — a document (a file, an
// object of a bucket) or a row — and so who owns the blobs its references
// name.
//
// Each layout has its own notion of an owner:
//
//   - forge: the session, that is the task; its id is the session file's
//     name without ".json" (t-1.json and its leftover t-1.json.tmp are task
//     "t-1").
//   - coffer: the conversation. A chat_messages row belongs to the
//     conversation its conversation_id column names, a conversations row to
//     itself; the conversation's agent_key is kept as the owner's agent.
//   - agent-runs (a plain --sessions run whose rows or keys say so): the user,
//     from the row's user_id column, or else from a key under
//     agent-inputs/{user_id}/{thread_id}/uploads/ — the key the reference
//     resolves to, not its spelling (see [Hint]).
//   - anything else: the file (its path below the source) or the row
//     ("table[key]"). A document naming a key under agent-inputs/{user_id}/
//     has no owner: the file and the key name two.
//
// --owner-by overrides the layout's rule: a JSON pointer ("/user/id") is
// looked up in each document (and in each JSON value of a row), a column name
// ("tenant_id") in each row. A unit the rule cannot attribute has no owner;
// callers list it as unattributed and never drop it. Nor has a unit whose
// values name two owners (two values at the pointer, in two columns of a row
// or two lines of a log): forget must never take it for either's. Ids are
// compared as the sessions spell them, spaces at the ends included.
//
// Attribution reads nothing of its own: an [Attributor] wraps the session
// sources, so that it sees the column values and documents the scan reads
// anyway, and answers once the read is over.
package owner

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/mediactl/mediactl/pkg/ref"
)

// Unit is one session unit: a document of a source, or a row of a table.
type Unit struct {
	Source   string `json:"source"`
	Document string `json:"document,omitempty"`
	Table    string `json:"table,omitempty"`
	Key      string `json:"key,omitempty"`
}

// UnitOf is the unit a place is in.
func UnitOf(p ref.Place) Unit {
	if p.Table != "" {
		return Unit{Source: p.Source, Table: p.Table, Key: p.Key}
	}
	return Unit{Source: p.Source, Document: p.Document}
}

// String names the unit for people: the document, or "table[key]".
func (u Unit) String() string {
	switch {
	case u.Table != "":
		return u.Table + "[" + u.Key + "]"
	case u.Document != "":
		return u.Document
	}
	return u.Source
}

// Owner is who a unit belongs to. The zero Owner is no owner.
type Owner struct {
	ID string `json:"id"`
	// Agent is coffer's agent of the conversation, when known.
	Agent string `json:"agent,omitempty"`
}

// Known reports whether the owner was attributed.
func (o Owner) Known() bool { return o.ID != "" }

// Rule is how units are attributed.
type Rule struct {
	// Layout is the layout the sources came from: "forge", "coffer", or ""
	// for sources given one by one.
	Layout string
	// Pointer, when set, is an RFC 6901 JSON pointer whose string (or
	// number) value in a document, or in a row's JSON value, is the owner.
	Pointer string
	// Column, when set, is the column whose value in a row is the owner.
	Column string
}

// ErrBadBy is returned by ParseBy for a value that is neither a JSON pointer
// nor a column name.
var ErrBadBy = errors.New("not a JSON pointer (/a/b) or a column name")

// ParseBy reads --owner-by: a JSON pointer ("/user/id", "" is not one: the
// whole document is no owner) or a column name (letters, digits, '_', '.',
// '-' and '$'), into r.
func ParseBy(r Rule, s string) (Rule, error) {
	switch {
	case s == "":
		return r, nil
	case strings.HasPrefix(s, "/"):
		if _, err := splitPointer(s); err != nil {
			return r, fmt.Errorf("--owner-by %q: %w", s, err)
		}
		r.Pointer = s
		return r, nil
	}
	for _, c := range s {
		if !(c == '_' || c == '.' || c == '-' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return r, fmt.Errorf("--owner-by %q: %w", s, ErrBadBy)
		}
	}
	r.Column = s
	return r, nil
}

// splitPointer checks an RFC 6901 pointer: every "~" is "~0" or "~1".
func splitPointer(p string) ([]string, error) {
	parts := strings.Split(p[1:], "/")
	for i, t := range parts {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("%w: a '~' must be followed by 0 or 1", ErrBadBy)
			}
		}
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	return parts, nil
}

// TaskID is forge's task of a session document: its file name without
// ".json" (and without a leftover's ".tmp", and the compression suffixes).
func TaskID(document string) string {
	name := path.Base(filepath.ToSlash(document))
	lower := strings.ToLower(name)
	for _, suf := range []string{".tmp", ".gz", ".zst", ".zstd", ".json", ".jsonl", ".ndjson"} {
		if strings.HasSuffix(lower, suf) {
			name, lower = name[:len(name)-len(suf)], lower[:len(lower)-len(suf)]
		}
	}
	return name
}

// AgentRunsOwner is the user of a key under agent-inputs/{user_id}/{thread_id}/uploads/
// (anywhere in p: a bucket URL, a {bucket, path} pair's path, a key below a
// prefix), and its thread; ok is false when p is not such a key.
func AgentRunsOwner(p string) (user, thread string, ok bool) {
	const dir = "agent-inputs/"
	i := strings.Index(p, dir)
	for i > 0 && p[i-1] != '/' && p[i-1] != ':' {
		j := strings.Index(p[i+1:], dir)
		if j < 0 {
			return "", "", false
		}
		i += 1 + j
	}
	if i < 0 {
		return "", "", false
	}
	parts := strings.SplitN(p[i+len(dir):], "/", 4)
	if len(parts) < 4 || parts[0] == "" || parts[1] == "" || parts[2] != "uploads" || parts[3] == "" {
		return "", "", false
	}
	if parts[0] == "." || parts[0] == ".." || parts[1] == "." || parts[1] == ".." {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// keyValue is the value of column col in a rendered row key "a=1,b=x", when
// the key has that column.
func keyValue(key, col string) (string, bool) {
	for part := range strings.SplitSeq(key, ",") {
		if v, ok := strings.CutPrefix(part, col+"="); ok {
			return v, true
		}
	}
	return "", false
}
