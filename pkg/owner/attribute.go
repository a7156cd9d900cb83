package owner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// Attributor learns, while the sessions are read, what the rule needs, and
// then says who owns each unit. Wrap every source before the read; ask Owner
// and Time after it. It is safe for concurrent use.
type Attributor struct {
	rule Rule

	mu   sync.Mutex
	rows map[Unit]*row
	docs map[Unit]*doc
}

// row is what a row's columns said.
type row struct {
	by     said   // Rule.Column's value, or the pointer's
	user   said   // user_id
	conv   said   // conversation_id
	agent  string // agent_key
	latest int64  // newest time column, Unix nanoseconds
}

// doc is what a document said.
type doc struct {
	by      said // the pointer's value
	modTime int64
}

// said is what a unit's values said of one thing (its owner, its user, its
// conversation): the first value, and whether another value said something
// else. Values are compared as the sessions spell them: "alice " and
// "alice\u00a0" are not "alice".
type said struct {
	v     string
	mixed bool
}

// add notes a value; "" says nothing.
func (s *said) add(v string) {
	switch {
	case v == "":
	case s.v == "":
		s.v = v
	case v != s.v:
		s.mixed = true
	}
}

// merge notes what o said too.
func (s *said) merge(o said) {
	s.add(o.v)
	s.mixed = s.mixed || o.mixed
}

// one is the single value said, or "" when none was or several were.
func (s said) one() string {
	if s.mixed {
		return ""
	}
	return s.v
}

// NewAttributor returns an attributor for rule.
func NewAttributor(rule Rule) *Attributor {
	return &Attributor{rule: rule, rows: map[Unit]*row{}, docs: map[Unit]*doc{}}
}

// Rule is the rule the attributor follows.
func (a *Attributor) Rule() Rule { return a.rule }

// timeColumns are the columns whose value says when a row was last active.
var timeColumns = map[string]bool{"updated_at": true, "created_at": true, "modified_at": true, "last_activity": true, "timestamp": true}

// Wrap returns src reading as it does, with the attributor looking on.
func (a *Attributor) Wrap(src sessions.Source) sessions.Source { return &watched{Source: src, a: a} }

type watched struct {
	sessions.Source
	a *Attributor
}

func (w *watched) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	return w.Source.Walk(ctx, func(it sessions.Item) error {
		switch {
		case it.Err != nil:
		case it.Open != nil:
			w.a.seeDocument(&it)
		default:
			for _, v := range it.Values {
				w.a.seeValue(it.ValuePlace(v), v.Text)
			}
		}
		return fn(it)
	})
}

// seeDocument notes a document's modification time (a file's), and, with a
// pointer rule, makes its Open look the pointer up first.
func (a *Attributor) seeDocument(it *sessions.Item) {
	u := UnitOf(it.Place)
	d := &doc{}
	if p := it.Place.Document; filepath.IsAbs(p) {
		if fi, err := os.Stat(p); err == nil {
			d.modTime = fi.ModTime().UnixNano()
		}
	}
	a.mu.Lock()
	if old, ok := a.docs[u]; ok {
		d.modTime = max(d.modTime, old.modTime)
		d.by = old.by
	}
	a.docs[u] = d
	a.mu.Unlock()
	ptr := a.pointer()
	if ptr == "" {
		return
	}
	open := it.Open
	it.Open = func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return rc, err
		}
		return &prefixReader{ReadCloser: rc, done: func(prefix []byte, whole bool) {
			// Every JSON value of the document (each line of a JSON Lines
			// log) says its owner: all of them are looked at. forge's task
			// id is looked for in the first bytes only.
			by, complete := lookupAll(bytes.NewReader(prefix), ptr)
			if (!whole || !complete) && a.rule.Pointer != "" {
				// Asked for, and the document goes on past the first bytes
				// (or is compressed): read all of it again.
				by, _ = a.lookupAgain(open, it.Place.Document, ptr)
			}
			a.mu.Lock()
			a.docs[u].by.merge(by)
			a.mu.Unlock()
		}}, nil
	}
}

// pointer is the JSON pointer looked up in documents: --owner-by's, or
// forge's task id.
func (a *Attributor) pointer() string {
	switch {
	case a.rule.Pointer != "":
		return a.rule.Pointer
	case a.rule.Column == "" && a.rule.Layout == "forge":
		return "/task_id"
	}
	return ""
}

// lookupAgain reads a document again, decompressed, for the values at ptr.
// A document that cannot be opened again says nothing (its unit stays
// unattributed).
func (a *Attributor) lookupAgain(open func() (io.ReadCloser, error), name, ptr string) (said, bool) {
	rc, err := open()
	if err != nil {
		return said{}, false
	}
	defer rc.Close()
	if rc, err = sessions.SniffDecompressed(rc, name); err != nil {
		return said{}, false
	}
	return lookupAll(rc, ptr)
}

// prefixMax is how much of a document a prefixReader keeps: a runtime
// writes its ids before the messages.
const prefixMax = 64 << 10

// prefixReader keeps the first bytes a document's reader hands the scan,
// and gives them to done when the scan closes it: the pointer is looked up
// without reading the document again.
type prefixReader struct {
	io.ReadCloser
	prefix []byte
	whole  bool
	done   func(prefix []byte, whole bool)
}

func (p *prefixReader) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if room := prefixMax - len(p.prefix); room > 0 && n > 0 {
		p.prefix = append(p.prefix, b[:min(n, room)]...)
	}
	if err == io.EOF && len(p.prefix) < prefixMax {
		p.whole = true
	}
	return n, err
}

func (p *prefixReader) Close() error {
	err := p.ReadCloser.Close()
	if p.done != nil {
		p.done(p.prefix, p.whole)
		p.done = nil
	}
	return err
}

// seeValue notes the column values the rule reads: text, at p.
func (a *Attributor) seeValue(p ref.Place, text []byte) {
	col := strings.ToLower(p.Column)
	var by said
	switch {
	case a.rule.Column != "" && a.matchesColumn(p.Table, p.Column):
		by.add(string(text))
	case a.rule.Pointer != "" && looksJSON(text):
		by, _ = lookupAll(bytes.NewReader(text), a.rule.Pointer)
	}
	var when int64
	if timeColumns[col] {
		if t, ok := parseTime(string(text)); ok {
			when = t.UnixNano()
		}
	}
	interesting := by.v != "" || when != 0 || col == "user_id" || col == "conversation_id" || col == "agent_key"
	if !interesting {
		return
	}
	u := UnitOf(p)
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.rows[u]
	if r == nil {
		r = &row{}
		a.rows[u] = r
	}
	// Every value counts, not the first: a row whose columns name two
	// owners (a reply's snapshot of the message it answers, and its own
	// metadata) has no single owner.
	r.by.merge(by)
	r.latest = max(r.latest, when)
	v := string(text)
	switch col {
	case "user_id":
		r.user.add(v)
	case "conversation_id":
		r.conv.add(v)
	case "agent_key":
		r.agent = v
	}
}

// matchesColumn reports whether table.column is the rule's column, given as
// "column" or "table.column", in any letter case.
func (a *Attributor) matchesColumn(table, column string) bool {
	want := a.rule.Column
	if t, c, ok := strings.Cut(want, "."); ok && !strings.Contains(c, ".") {
		return strings.EqualFold(t, table) && strings.EqualFold(c, column) ||
			strings.EqualFold(want, column) // a column whose name has a dot
	}
	return strings.EqualFold(want, column)
}

func looksJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// Owner is the owner of unit u, for a reference whose hint is refText (what
// [Hint] gave for it, "" for none): called after the read, when every value
// the rule reads has been seen. The zero Owner is no owner: list u as
// unattributed. A unit whose values name two owners (two values at the
// pointer, two lines of a log) has none, and so has a document naming a
// user's upload: its own owner, the file, is not that user.
func (a *Attributor) Owner(u Unit, refText string) Owner {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.rows[u]
	switch {
	case a.rule.Pointer != "":
		if u.Table != "" {
			if r != nil {
				return Owner{ID: r.by.one()}
			}
			return Owner{}
		}
		if d := a.docs[u]; d != nil {
			return Owner{ID: d.by.one()}
		}
		return Owner{}
	case a.rule.Column != "":
		if u.Table == "" {
			return Owner{}
		}
		if r != nil && r.by.v != "" {
			return Owner{ID: r.by.one()}
		}
		col := a.rule.Column
		if _, c, ok := strings.Cut(col, "."); ok {
			col = c
		}
		v, _ := keyValue(u.Key, col)
		return Owner{ID: v}
	}
	switch a.rule.Layout {
	case "forge":
		if u.Table != "" || u.Document == "" {
			return Owner{}
		}
		if d := a.docs[u]; d != nil && d.by.v != "" {
			return Owner{ID: d.by.one()}
		}
		return Owner{ID: TaskID(u.Document)}
	case "coffer":
		conv := ""
		switch {
		case r != nil && r.conv.v != "":
			conv = r.conv.one()
		case strings.EqualFold(u.Table, "conversations"):
			conv, _ = keyValue(u.Key, "id")
		}
		if conv == "" {
			return Owner{}
		}
		o := Owner{ID: conv}
		if c := a.rows[Unit{Source: u.Source, Table: "conversations", Key: "id=" + conv}]; c != nil {
			o.Agent = c.agent
		}
		return o
	}
	// A row's user_id column names its owner; else a reference's key
	// prefix names the user (agent-runs' rows that were read without it).
	if u.Table != "" {
		if r != nil && r.user.v != "" {
			return Owner{ID: r.user.one()}
		}
		if v, ok := keyValue(u.Key, "user_id"); ok && v != "" {
			return Owner{ID: v}
		}
	}
	own := Owner{ID: u.String()}
	if u.Table == "" {
		own = Owner{ID: fileOwner(u)}
	}
	if user, _, ok := AgentRunsOwner(refText); ok {
		if u.Table == "" && user != own.ID {
			// A document is its own owner (the file): one naming a user's
			// upload mixes two owners, whichever it is the session of.
			return Owner{}
		}
		return Owner{ID: user}
	}
	return own
}

// fileOwner is the plain rule's owner of a document: its path below the
// source, or as it is; "" for a unit that is no document.
func fileOwner(u Unit) string {
	if u.Document == "" {
		return ""
	}
	if rel, err := filepath.Rel(u.Source, u.Document); err == nil && filepath.IsAbs(u.Document) && !strings.HasPrefix(rel, "..") && rel != "." {
		return filepath.ToSlash(rel)
	}
	return u.Document
}

// Time is when unit u was last active, as far as the read could tell: a
// file's modification time, a row's newest time column (updated_at,
// created_at, …). ok is false when nothing said.
func (a *Attributor) Time(u Unit) (t time.Time, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	if r := a.rows[u]; r != nil {
		n = r.latest
	}
	if d := a.docs[u]; d != nil {
		n = max(n, d.modTime)
	}
	if n == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// Units calls fn for every unit the attributor knows a time or a value of
// (rows with a time column, documents).
func (a *Attributor) Units(fn func(Unit)) {
	a.mu.Lock()
	units := make([]Unit, 0, len(a.rows)+len(a.docs))
	for u := range a.rows {
		units = append(units, u)
	}
	for u := range a.docs {
		units = append(units, u)
	}
	a.mu.Unlock()
	for _, u := range units {
		fn(u)
	}
}

// parseTime reads the time formats databases write as text.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// errFound stops a lookup's walk.
var errFound = errors.New("found")

// lookup runs h over r: the values at h's pointer.
func lookup(r io.Reader, h *pointerHandler) error {
	if segs, err := splitPointer(h.want); err == nil {
		h.depth, h.last = len(segs), segs[len(segs)-1]
	}
	err := jsonwalk.New(r, h, jsonwalk.Limits{}).Run()
	if errors.Is(err, errFound) {
		err = nil
	}
	return err
}

// lookupAll is what every JSON value of r (each line of a JSON Lines log)
// holds at pointer p: its value (a string's, or a number's text), or mixed
// when two values there differ. complete is false when r was not read to
// its end as JSON (cut, compressed, not JSON): what its readable part said
// is returned then.
func lookupAll(r io.Reader, p string) (s said, complete bool) {
	h := &pointerHandler{want: p, all: true}
	err := lookup(r, h)
	return h.said, err == nil || h.said.mixed
}

// Lookup is the value at the JSON pointer p in the first JSON value of doc
// (a string's, or a number's text), or "" when it has none there.
func Lookup(doc []byte, p string) string {
	h := &pointerHandler{want: p}
	_ = lookup(bytes.NewReader(doc), h)
	return h.said.v
}

type pointerHandler struct {
	want  string
	all   bool // every value at the pointer, not the first one's
	said  said
	depth int    // the pointer's segments
	last  string // its last segment, unescaped
}

func (h *pointerHandler) Begin(w *jsonwalk.Walker, kind byte) error {
	if !h.all && w.Values() > 0 {
		return errFound // the first value is over: stop
	}
	return nil
}

func (h *pointerHandler) End(*jsonwalk.Walker, byte) error { return nil }

func (h *pointerHandler) String(w *jsonwalk.Walker, s []byte, _ int64) error {
	return h.at(w, s)
}

func (h *pointerHandler) Name(*jsonwalk.Walker, []byte) error { return nil }

func (h *pointerHandler) Number(w *jsonwalk.Walker, num []byte) error { return h.at(w, num) }

func (h *pointerHandler) at(w *jsonwalk.Walker, v []byte) error {
	if !h.all && w.Values() > 0 {
		return errFound
	}
	// Depth and member name first: rendering the pointer of every value
	// would cost more than the walk.
	if w.Depth() != h.depth {
		return nil
	}
	if k := w.Key(); k != nil && string(k) != h.last {
		return nil
	}
	if w.Pointer() == h.want {
		// As spelled: an id with a space at an end is another owner.
		h.said.add(string(v))
		if !h.all || h.said.mixed {
			return errFound
		}
	}
	return nil
}
