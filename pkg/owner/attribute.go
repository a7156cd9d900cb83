package owner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
)

// Attributor learns, while the sessions are read, what the rule needs, and
// then says who owns each unit. Wrap every source (and Track, for forget)
// before the read; ask Owner, Time, Latest, Seen and Tracked after it. It is
// safe for concurrent use.
//
// A row is one item: its owner is decided when it is read, and kept as a
// small record found again by the item's tag (sessions.Item.Tag, handed
// back with every reference found in the row), not by the row's name. A
// session database has millions of rows, most without a reference; keying
// each by its source, table and key cost more than reading it.
type Attributor struct {
	rule  Rule
	track func(id string) bool

	mu sync.Mutex
	// rows are the rows' records in chunks of rowChunk; tag t is row t-1.
	rows  [][]rowRec
	nrows int64
	// owners indexes ids: the owners rows were attributed to.
	owners map[string]int32
	ids    []string
	// latest is each owner's newest row time (Unix ns), by index in ids.
	latest []int64
	// agents are coffer's agents of conversations, by the source and key
	// of the conversations row.
	agents  map[[2]string]string
	tracked []tracked
	// trackedIDs are the owners of the tracked units.
	trackedIDs map[string]bool
	// named are the rows of a source whose keys may repeat (a query's
	// first column, a table without a key): rows under one name are one
	// unit, whose values are weighed together once the read is over.
	named map[Unit]*namedRow
	docs  map[Unit]*doc
	// lateOwners are the documents' and named rows' owners, each with its
	// units' newest time, made by afterRead.
	lateOwners map[string]int64
	settled    bool // afterRead is done
}

// Row owners besides an index in Attributor.ids.
const (
	noOwner  = -1 // the row's values name none, or two
	rowOwner = -2 // the row is its own owner (the plain rule), unless a reference's key says a user
	byName   = -3 // decided after the read, with the other rows of its name (Attributor.named)
)

// namedRow is what the rows of one name said.
type namedRow struct {
	tag            int64
	by, user, conv said
}

const rowChunk = 8192

// rowRec is what a row said, decided when it was read.
type rowRec struct {
	owner  int32 // index in Attributor.ids, noOwner or rowOwner
	latest int64 // newest time column, Unix nanoseconds
}

// tracked is a unit of an owner Track asked for.
type tracked struct {
	u   Unit
	tag int64
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

// addBytes notes what b said too.
func (s *said) addBytes(b saidBytes) {
	s.add(string(b.v))
	s.mixed = s.mixed || b.mixed
}

// bytes is s as saidBytes.
func (s said) bytes() saidBytes {
	b := saidBytes{mixed: s.mixed}
	if s.v != "" {
		b.v = []byte(s.v)
	}
	return b
}

// saidBytes is said over a row's values, which the row still holds.
type saidBytes struct {
	v     []byte
	mixed bool
}

func (s *saidBytes) add(v []byte) {
	switch {
	case len(v) == 0:
	case s.v == nil:
		s.v = v
	case !bytes.Equal(v, s.v):
		s.mixed = true
	}
}

func (s *saidBytes) merge(o said) {
	s.add([]byte(o.v))
	s.mixed = s.mixed || o.mixed
}

// one is the single value said, or nil.
func (s saidBytes) one() []byte {
	if s.mixed {
		return nil
	}
	return s.v
}

// NewAttributor returns an attributor for rule.
func NewAttributor(rule Rule) *Attributor {
	return &Attributor{rule: rule, owners: map[string]int32{}, agents: map[[2]string]string{}, docs: map[Unit]*doc{}}
}

// Rule is the rule the attributor follows.
func (a *Attributor) Rule() Rule { return a.rule }

// Track makes the attributor keep every unit whose own owner (the owner of
// its references without a hint) is one wanted says yes to, with
// references or not, for Tracked. Call it before the read: a row is not
// kept by name unless it is tracked.
func (a *Attributor) Track(wanted func(id string) bool) { a.track = wanted }

// Wrap returns src reading as it does, with the attributor looking on. It
// tags every row it yields (sessions.Item.Tag): Owner and Time of a row
// want the tag of the reference found in it.
func (a *Attributor) Wrap(src sessions.Source) sessions.Source { return &watched{Source: src, a: a} }

type watched struct {
	sessions.Source
	a *Attributor
}

func (w *watched) Walk(ctx context.Context, fn func(sessions.Item) error) (sessions.Counts, error) {
	var roles columnRoles
	return w.Source.Walk(ctx, func(it sessions.Item) error {
		switch {
		case it.Err != nil:
		case it.Open != nil:
			w.a.seeDocument(&it)
		default:
			it.Tag = w.a.seeRow(&it, &roles)
		}
		return fn(it)
	})
}

// Column roles: what a column's values say.
const (
	roleTime   = 1 << iota // when the row was last active
	roleUser               // user_id
	roleConv               // conversation_id
	roleAgent              // agent_key
	roleColumn             // the rule's column
)

// columnRoles are the roles of one row's columns, kept for the next row: a
// table's rows come one after another, with the same columns.
type columnRoles struct {
	table string
	cols  []string
	roles []uint8
	// layouts are the time columns' last layouts (see parseTime).
	layouts []int8
}

func (c *columnRoles) of(a *Attributor, it *sessions.Item) []uint8 {
	same := c.table == it.Place.Table && len(c.cols) == len(it.Values)
	for i := 0; same && i < len(it.Values); i++ {
		same = c.cols[i] == it.Values[i].Column
	}
	if same {
		return c.roles
	}
	c.table, c.cols, c.roles, c.layouts = it.Place.Table, c.cols[:0], c.roles[:0], c.layouts[:0]
	for _, v := range it.Values {
		var r uint8
		switch strings.ToLower(v.Column) {
		case "updated_at", "created_at", "modified_at", "last_activity", "timestamp":
			r |= roleTime
		case "user_id":
			r |= roleUser
		case "conversation_id":
			r |= roleConv
		case "agent_key":
			r |= roleAgent
		}
		if a.rule.Column != "" && a.matchesColumn(it.Place.Table, v.Column) {
			r |= roleColumn
		}
		c.cols, c.roles, c.layouts = append(c.cols, v.Column), append(c.roles, r), append(c.layouts, -1)
	}
	return c.roles
}

// seeRow decides a row's owner from its values and key, and records it: the
// row's tag.
func (a *Attributor) seeRow(it *sessions.Item, roles *columnRoles) int64 {
	rs := roles.of(a, it)
	var by, user, conv saidBytes
	var agent []byte
	var when int64
	for i, v := range it.Values {
		r := rs[i]
		switch {
		case r&roleColumn != 0:
			by.add(v.Text)
		case a.rule.Pointer != "" && looksJSON(v.Text):
			// Every value counts, not the first: a row whose columns name
			// two owners (a reply's snapshot of the message it answers, and
			// its own metadata) has no single owner.
			s, _ := lookupAll(bytes.NewReader(v.Text), a.rule.Pointer)
			by.merge(s)
		}
		if r&roleTime != 0 {
			if t, ok := parseTime(string(v.Text), &roles.layouts[i]); ok {
				when = max(when, t.UnixNano())
			}
		}
		switch {
		case r&roleUser != 0:
			user.add(v.Text)
		case r&roleConv != 0:
			conv.add(v.Text)
		case r&roleAgent != 0:
			agent = v.Text
		}
	}
	p := &it.Place
	if p.Table == "query" || p.Key == "" {
		return a.seeNamed(p, by, user, conv, agent, when)
	}
	id, kind := a.decideRow(p.Table, p.Key, by, user, conv)

	a.mu.Lock()
	defer a.mu.Unlock()
	owner := kind
	if kind >= 0 {
		owner = a.intern(id)
		a.latest[owner] = max(a.latest[owner], when)
	}
	a.noteAgent(p, agent)
	tag := a.addRow(rowRec{owner: owner, latest: when})
	if a.track != nil {
		a.noteTracked(Unit{Source: p.Source, Table: p.Table, Key: p.Key}, tag, string(id), kind)
	}
	return tag
}

// noteTracked keeps unit u, found with tag, when its own owner — id, of
// kind 0; the unit's name for a row that is its own owner (rowOwner) — is
// one Track asked for. a.mu is held.
func (a *Attributor) noteTracked(u Unit, tag int64, id string, kind int32) {
	switch {
	case a.track == nil:
		return
	case kind == rowOwner:
		id = u.String()
	case kind != 0:
		return
	}
	if a.track(id) {
		a.tracked = append(a.tracked, tracked{u: u, tag: tag})
		if a.trackedIDs == nil {
			a.trackedIDs = map[string]bool{}
		}
		a.trackedIDs[id] = true
	}
}

// seeNamed records a row of a source whose keys may repeat: the rows of one
// name are one unit, as before the rows were told apart by their tags, and
// get its tag. A query keyed by a conversation holding two users' rows is
// one unit of two owners (none), never either user's.
func (a *Attributor) seeNamed(p *ref.Place, by, user, conv saidBytes, agent []byte, when int64) int64 {
	u := Unit{Source: p.Source, Table: p.Table, Key: p.Key}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.noteAgent(p, agent)
	n := a.named[u]
	if n == nil {
		if a.named == nil {
			a.named = map[Unit]*namedRow{}
		}
		n = &namedRow{tag: a.addRow(rowRec{owner: byName})}
		a.named[u] = n
	}
	n.by.addBytes(by)
	n.user.addBytes(user)
	n.conv.addBytes(conv)
	r := a.row(n.tag)
	r.latest = max(r.latest, when)
	return n.tag
}

// noteAgent keeps a conversations row's agent; a.mu is held.
func (a *Attributor) noteAgent(p *ref.Place, agent []byte) {
	if agent != nil && p.Table == "conversations" {
		a.agents[[2]string{p.Source, p.Key}] = string(agent)
	}
}

// addRow records a row: its tag. a.mu is held.
func (a *Attributor) addRow(r rowRec) int64 {
	if a.nrows%rowChunk == 0 {
		a.rows = append(a.rows, make([]rowRec, 0, rowChunk))
	}
	c := &a.rows[len(a.rows)-1]
	*c = append(*c, r)
	a.nrows++
	return a.nrows
}

// decideRow is the owner of a row of table with key whose values said by
// (the rule's column or pointer), user (user_id) and conv
// (conversation_id): an id and its kind (0), or none (noOwner, id nil), or
// the row itself (rowOwner, id nil).
func (a *Attributor) decideRow(table, key string, by, user, conv saidBytes) ([]byte, int32) {
	some := func(v []byte) ([]byte, int32) {
		if len(v) == 0 {
			return nil, noOwner
		}
		return v, 0
	}
	switch {
	case a.rule.Pointer != "":
		return some(by.one())
	case a.rule.Column != "":
		if by.v != nil {
			return some(by.one())
		}
		col := a.rule.Column
		if _, c, ok := strings.Cut(col, "."); ok {
			col = c
		}
		v, _ := keyValue(key, col)
		return some([]byte(v))
	}
	switch a.rule.Layout {
	case "forge":
		return nil, noOwner
	case "coffer":
		switch {
		case conv.v != nil:
			return some(conv.one())
		case strings.EqualFold(table, "conversations"):
			v, _ := keyValue(key, "id")
			return some([]byte(v))
		}
		return nil, noOwner
	}
	// A row's user_id column names its owner; else a reference's key
	// prefix names the user (agent-runs' rows that were read without it).
	if user.v != nil {
		return some(user.one())
	}
	if v, ok := keyValue(key, "user_id"); ok && v != "" {
		return []byte(v), 0
	}
	return nil, rowOwner
}

// intern is id's index in a.ids; a.mu is held.
func (a *Attributor) intern(id []byte) int32 {
	if i, ok := a.owners[string(id)]; ok {
		return i
	}
	i := int32(len(a.ids))
	s := string(id)
	a.owners[s] = i
	a.ids = append(a.ids, s)
	a.latest = append(a.latest, 0)
	return i
}

// row is the record of tag, nil for none; a.mu is held.
func (a *Attributor) row(tag int64) *rowRec {
	if tag <= 0 || tag > a.nrows {
		return nil
	}
	t := tag - 1
	return &a.rows[t/rowChunk][t%rowChunk]
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
// the rule reads has been seen. tag is the row's (the Found.Tag of the
// reference found in it), 0 for a document. The zero Owner is no owner:
// list u as unattributed. A unit whose values name two owners (two values
// at the pointer, two lines of a log) has none, and so has a document
// naming a user's upload: its own owner, the file, is not that user.
func (a *Attributor) Owner(u Unit, tag int64, refText string) Owner {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owner(u, tag, refText)
}

func (a *Attributor) owner(u Unit, tag int64, refText string) Owner {
	if u.Table != "" {
		id, kind := a.rowOwnerOf(u, tag)
		switch kind {
		case 0:
			return a.withAgent(u, Owner{ID: id})
		case noOwner:
			return Owner{}
		}
		if user, _, ok := AgentRunsOwner(refText); ok {
			return Owner{ID: user}
		}
		return Owner{ID: u.String()}
	}
	// A document.
	switch {
	case a.rule.Pointer != "":
		if d := a.docs[u]; d != nil {
			return Owner{ID: d.by.one()}
		}
		return Owner{}
	case a.rule.Column != "":
		return Owner{}
	}
	switch a.rule.Layout {
	case "forge":
		if u.Document == "" {
			return Owner{}
		}
		if d := a.docs[u]; d != nil && d.by.v != "" {
			return Owner{ID: d.by.one()}
		}
		return Owner{ID: TaskID(u.Document)}
	case "coffer":
		return Owner{}
	}
	own := fileOwner(u)
	if user, _, ok := AgentRunsOwner(refText); ok {
		if user != own {
			// A document is its own owner (the file): one naming a user's
			// upload mixes two owners, whichever it is the session of.
			return Owner{}
		}
		return Owner{ID: user}
	}
	return Owner{ID: own}
}

// rowOwnerOf is the owner of row u with tag: an id (kind 0), none
// (noOwner) or the row itself (rowOwner). a.mu is held.
func (a *Attributor) rowOwnerOf(u Unit, tag int64) (string, int32) {
	var id []byte
	var kind int32
	switch r := a.row(tag); {
	case r == nil:
		// A row read without the attributor: what its key says.
		id, kind = a.decideRow(u.Table, u.Key, saidBytes{}, saidBytes{}, saidBytes{})
	case r.owner == byName:
		n := a.named[u]
		if n == nil {
			return "", noOwner
		}
		id, kind = a.decideRow(u.Table, u.Key, n.by.bytes(), n.user.bytes(), n.conv.bytes())
	case r.owner >= 0:
		return a.ids[r.owner], 0
	default:
		return "", r.owner
	}
	return string(id), kind
}

// withAgent is o with coffer's agent of its conversation.
func (a *Attributor) withAgent(u Unit, o Owner) Owner {
	if a.rule.Layout == "coffer" && a.rule.Pointer == "" && a.rule.Column == "" {
		o.Agent = a.agents[[2]string{u.Source, "id=" + o.ID}]
	}
	return o
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
// created_at, …). tag is as for Owner. ok is false when nothing said.
func (a *Attributor) Time(u Unit, tag int64) (t time.Time, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	if r := a.row(tag); r != nil && u.Table != "" {
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

// Latest is when owner id was last active: the newest time of the units it
// owns (their own owner, without a hint), with references or not. ok is
// false when none said a time.
func (a *Attributor) Latest(id string) (t time.Time, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var n int64
	if i, ok := a.owners[id]; ok {
		n = a.latest[i]
	}
	a.afterRead()
	n = max(n, a.lateOwners[id])
	if n == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// Seen reports whether a unit of owner id was read: a row or a document
// whose own owner (without a hint) it is. A row that is its own owner is
// seen only when Track asked for it.
func (a *Attributor) Seen(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.afterRead()
	_, row := a.owners[id]
	_, late := a.lateOwners[id]
	return row || late || a.trackedIDs[id]
}

// afterRead settles, once, what is known only once the read is over: a
// document's owner (it may be learnt when the document is closed) and that
// of the rows of one name (all of them read), each with its units' newest
// time, and which of those units Track asked for. a.mu is held.
func (a *Attributor) afterRead() {
	if a.settled {
		return
	}
	a.settled = true
	a.lateOwners = map[string]int64{}
	late := func(u Unit, tag int64, id string, kind int32, t int64) {
		if kind == 0 {
			a.lateOwners[id] = max(a.lateOwners[id], t)
		}
		a.noteTracked(u, tag, id, kind)
	}
	for u, d := range a.docs {
		if o := a.owner(u, 0, ""); o.Known() {
			late(u, 0, o.ID, 0, d.modTime)
		}
	}
	for u, n := range a.named {
		id, kind := a.rowOwnerOf(u, n.tag)
		late(u, n.tag, id, kind, a.row(n.tag).latest)
	}
}

// Tracked calls fn for every unit read whose own owner Track asked for,
// with its tag (0 for a document).
func (a *Attributor) Tracked(fn func(u Unit, tag int64)) {
	a.mu.Lock()
	a.afterRead()
	units := slices.Clone(a.tracked)
	a.mu.Unlock()
	for _, t := range units {
		fn(t.u, t.tag)
	}
}

// timeLayouts are the time formats databases write as text. A text two of
// them read (a "Z" zone), they read as the same time.
var timeLayouts = [...]string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"}

// parseTime reads s in the layout of timeLayouts it is in, trying *last
// first (the layout of the column's previous value, -1 for none) and
// noting the one it was in: a column's values share a format, and every
// layout tried in vain builds an error only to throw it away.
func parseTime(s string, last *int8) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || len(s) > 40 {
		return time.Time{}, false
	}
	if i := *last; i >= 0 {
		if t, err := time.Parse(timeLayouts[i], s); err == nil {
			return t, true
		}
	}
	for i, layout := range timeLayouts {
		if int8(i) == *last {
			continue
		}
		if t, err := time.Parse(layout, s); err == nil {
			*last = int8(i)
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
