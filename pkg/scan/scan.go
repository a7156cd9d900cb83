// Package scan reads every session source, extracts every reference to a blob,
// and — given a store — finds the references whose blob is missing (dangling)
// and those that point outside the store.
//
// Run streams: documents are parsed by a pool of workers as they are listed, and
// only what the report needs is kept — one compact entry per distinct blob, and
// the references that are dangling or outside, each with its exact place.
// Libraries never print; Run returns a Report and optionally hands every
// reference to a callback (for NDJSON streaming).
package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mediactl/mediactl/pkg/jsonwalk"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// Options configure a scan.
type Options struct {
	// Sources are the session sources to read. At most MaxSources.
	Sources []sessions.Source
	// Stores, when given, are checked for every referenced key. A reference
	// belongs to the first store it resolves inside (a forge work directory has
	// two: inbound/ and generated/).
	Stores []Target
	// Jobs is the number of documents parsed at once; 0 means one per CPU.
	Jobs int
	// MaxListed caps how many dangling references, outside references and
	// problems the report lists (the counts are always complete); 0 means 10,000.
	MaxListed int
	// OnReference, when set, is called for every reference found, from a single
	// goroutine, in no particular order across documents.
	OnReference func(Found)
	// UnitPlaces gives each reference's place down to its document or row
	// only (no Pointer, Offset -1), to OnReference and in the report's
	// lists of dangling and outside references alike: all an attribution to
	// session units needs. Rendering the JSON pointer of every reference
	// handed over costs more than finding it.
	UnitPlaces bool
	// Progress, when set, is told about bytes read.
	Progress Progress
	// Text, when set, is called with every string of every document and value,
	// from several goroutines at once (retain.Index.Mark is such a function).
	Text func(s []byte)
	// CountOnly counts references without keeping a set of the distinct blobs
	// they name (DistinctBlobs stay 0): for callers that only need Text, such
	// as gc's marking, it saves a map entry per distinct blob. It needs no
	// Stores, since nothing is checked against them.
	CountOnly bool
	// Shard, when sharded, keeps only the references to blobs of that shard
	// (by the store key a reference resolves to, else by what it names):
	// the shards of one split report every reference exactly once together.
	// Text still sees every string, and references only counted
	// (CountOnly without OnReference) are all counted.
	Shard shard.Spec
}

// Progress receives progress from a running scan. Implementations must be safe
// for concurrent use.
type Progress interface {
	Add(bytes int64)
}

// Target is a store with the resolver that maps references to its keys.
type Target struct {
	Store store.Store
	// Resolver is derived from Store by NewResolver when nil.
	Resolver *ref.Resolver
}

// MaxSources is the most session sources one scan reads.
const MaxSources = 64

// Found is one reference with its place and, given a store, its resolution.
type Found struct {
	Ref    ref.Reference `json:"reference"`
	Place  ref.Place     `json:"place"`
	Status ref.Status    `json:"status,omitempty"` // empty without a store
	Store  string        `json:"store,omitempty"`  // the store it is inside
	Key    string        `json:"key,omitempty"`    // store key when inside
	store  int
	// alts are the other stores the reference is also inside (an alias of a
	// moved folder beside the folder itself): the file is looked for in
	// store first, then in these, in order.
	alts []located
	// Missing is set for an inside reference whose blob does not exist.
	Missing bool `json:"missing,omitempty"`
	// Tag is the sessions.Item.Tag of the item the reference was found in.
	Tag int64 `json:"-"`
}

// Problem is something that stopped part of the scan: an unreadable file, a
// malformed or truncated document, a source that failed.
type Problem struct {
	Place ref.Place `json:"place"`
	Err   string    `json:"error"`
}

// SourceReport is what was read from one source.
type SourceReport struct {
	Source        string `json:"source"`
	Documents     int64  `json:"documents"`
	Rows          int64  `json:"rows"`
	Skipped       int64  `json:"skipped"`
	Bytes         int64  `json:"bytes"`
	References    int64  `json:"references"`
	DistinctBlobs int64  `json:"distinct_blobs"`
	Problems      int64  `json:"problems"`
	Complete      bool   `json:"complete"`

	// A folder's entries excluded by the operator, "*.tmp" leftovers read
	// (not counted in Documents), and files neither read nor excluded (each
	// also a problem).
	Excluded  int64 `json:"excluded"`
	Leftovers int64 `json:"leftovers"`
	Unread    int64 `json:"unread"`
	// LeftoversAsText counts leftovers that are not whole JSON (a write cut
	// short by a crash): their references up to the cut are reported, and
	// the retention rule reads all their bytes as text.
	LeftoversAsText int64 `json:"leftovers_as_text"`
}

// Report is the result of a scan.
type Report struct {
	// Shard is the part of the blobs reported on, "K/N" ("" for all).
	Shard   string         `json:"shard,omitempty"`
	Sources []SourceReport `json:"sources"`
	// Stores are the locations of the stores checked.
	Stores []string `json:"stores,omitempty"`

	References    int64 `json:"references"`
	DistinctBlobs int64 `json:"distinct_blobs"`
	// ByStatus counts references by resolution (only with a store).
	ByStatus map[string]int64 `json:"by_status,omitempty"`
	// DanglingBlobs counts distinct missing keys; DanglingReferences the
	// references to them.
	DanglingBlobs      int64 `json:"dangling_blobs"`
	DanglingReferences int64 `json:"dangling_references"`

	Dangling []Found   `json:"dangling"`
	Outside  []Found   `json:"outside"`
	Problems []Problem `json:"problems"`
	// Truncated is set when a list above was cut at Options.MaxListed.
	Truncated bool `json:"truncated,omitempty"`

	// Complete is false when any source or document could not be read in full;
	// then the counts describe only what was read.
	Complete bool `json:"complete"`
	// Interrupted is set when the context was cancelled before the scan finished.
	Interrupted bool `json:"interrupted,omitempty"`
}

// NewResolver derives a resolver from a store: its directory (and that
// directory with symlinks resolved) for a local store, its bucket and prefix for
// a bucket. bases are directories that relative references are relative to.
func NewResolver(st store.Store, bases []string) *ref.Resolver {
	switch s := st.(type) {
	case store.Local:
		return ref.NewLocalResolver(s.Dir(), realDir(s.Dir()), bases)
	case store.Bucket:
		return ref.NewBucketResolver(s.Scheme(), s.Name(), s.Prefix())
	}
	return nil
}

type item struct {
	sessions.Item
	source int
}

// batch is what a worker found in one item. References are counted there;
// only the ones the report lists (dangling, outside) or hands to OnReference
// travel as a Found.
// statuses is the size of a table indexed by ref.Status.
const statuses = int(ref.Runtime) + 1

type batch struct {
	source   int
	found    []Found
	refs     int64 // references found, whether in found or not
	byStatus [statuses]int64
	// danglingBlobs are the distinct keys this batch's stats found missing.
	danglingBlobs int64
	storeProbs    []Problem // stats that failed
	bytes         int64
	prob          *Problem
	asText        bool // a leftover read as text
}

// Validate checks the options before anything is read.
func (o *Options) Validate() error {
	switch {
	case len(o.Sources) == 0:
		return errors.New("scan: no session source given")
	case o.CountOnly && len(o.Stores) > 0:
		return errors.New("scan: CountOnly checks no store: give no Stores")
	case len(o.Sources) > MaxSources:
		return fmt.Errorf("scan: %d session sources given, at most %d are supported", len(o.Sources), MaxSources)
	}
	return nil
}

// Run scans. It returns an error only for invalid options; everything that goes
// wrong while reading is in the report, which says whether it is complete.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.NumCPU()
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 10000
	}
	opts.Stores = append([]Target(nil), opts.Stores...)
	rep := &Report{Complete: true, Shard: opts.Shard.String()}
	for i, t := range opts.Stores {
		if t.Resolver == nil {
			opts.Stores[i].Resolver = NewResolver(t.Store, nil)
		}
		rep.Stores = append(rep.Stores, t.Store.Location())
	}
	if len(opts.Stores) > 0 {
		rep.ByStatus = map[string]int64{}
	}
	for _, s := range opts.Sources {
		rep.Sources = append(rep.Sources, SourceReport{Source: s.String(), Complete: true})
	}

	units := make(chan *unit, 4*opts.Jobs)
	// Units of rows go back to the producers once read: a unit is 256
	// rows and their values, too large to allocate anew for every 256 rows.
	spare := make(chan *unit, 8*opts.Jobs+len(opts.Sources))
	batches := make(chan batch, 4*opts.Jobs)

	// Producers: every source walks in its own goroutine.
	var producers sync.WaitGroup
	counts := make([]sessions.Counts, len(opts.Sources))
	walkErrs := make([]error, len(opts.Sources))
	for i, src := range opts.Sources {
		producers.Add(1)
		go func() {
			defer producers.Done()
			u := unitBuilder{spare: spare}
			send := func(us *unit) error {
				select {
				case units <- us:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			counts[i], walkErrs[i] = src.Walk(ctx, func(it sessions.Item) error {
				return u.add(item{it, i}, send)
			})
			// What was read before a failure is handed over too.
			if err := u.flush(send); walkErrs[i] == nil {
				walkErrs[i] = err
			}
		}()
	}
	go func() { producers.Wait(); close(units) }()

	// Workers parse documents and values, and record what they find in the
	// shared blob set.
	set := newBlobSet(ctx, opts.Stores)
	var workers sync.WaitGroup
	for range opts.Jobs {
		workers.Add(1)
		go func() {
			defer workers.Done()
			w := &worker{ctx: ctx, stores: opts.Stores, set: set, progress: opts.Progress, text: opts.Text,
				countOnly: opts.CountOnly && opts.OnReference == nil, unrecorded: opts.CountOnly, sendAll: opts.OnReference != nil,
				unitPlaces: opts.UnitPlaces, exts: map[string]uint16{}, out: batches, shard: opts.Shard}
			for us := range units {
				w.handle(us.items)
				if cap(us.items) == unitItems {
					clear(us.items) // nothing read stays reachable
					clear(us.vals)
					us.items, us.vals = us.items[:0], us.vals[:0]
					select {
					case spare <- us:
					default:
					}
				}
			}
		}()
	}
	go func() { workers.Wait(); close(batches) }()

	c := &collector{opts: opts, rep: rep, set: set}
	for b := range batches {
		c.add(b)
	}
	producers.Wait()

	for i := range rep.Sources {
		sr := &rep.Sources[i]
		sr.Documents, sr.Rows, sr.Skipped = counts[i].Documents, counts[i].Rows, counts[i].Skipped
		sr.Excluded, sr.Leftovers, sr.Unread = counts[i].Excluded, counts[i].Leftovers, counts[i].Unread
		if err := walkErrs[i]; err != nil && !errors.Is(err, context.Canceled) {
			c.problem(i, Problem{Place: ref.Place{Source: sr.Source, Offset: -1}, Err: err.Error()})
		}
		sr.Complete = sr.Problems == 0
	}
	c.finish()
	if ctx.Err() != nil {
		rep.Interrupted = true
		rep.Complete = false
	}
	return rep, nil
}

type worker struct {
	ctx        context.Context
	stores     []Target
	set        *blobSet
	progress   Progress
	text       func([]byte)
	countOnly  bool // count references, keep nothing
	unrecorded bool // hand references to OnReference without recording their blobs
	sendAll    bool // every reference goes to the collector (for OnReference)
	unitPlaces bool // Options.UnitPlaces
	shard      shard.Spec
	exts       map[string]uint16
	out        chan<- batch
	b          batch // the batch being filled
	// recent are the last references of the current item that need no
	// second look (see settled).
	recent [4]settled
	next   int
	tag    int64 // the current item's Tag
	ex     *ref.Extractor
	flat   flatBatch // the item's names still to record, without stores
}

// unitBuilder gathers a source's database rows into units for the workers:
// most rows are a few short values, and handing each over on its own (a
// channel send, a batch back to the collector) cost more than reading it.
// A document or a problem travels alone, so that documents are still parsed
// in parallel.
type unitBuilder struct {
	pending *unit
	bytes   int
	spare   chan *unit // units the workers have read, to be filled again
}

// unit is what a worker is handed: items of one source, and the values of
// their rows, which the items' Values are views of (a source's Values are
// only valid during its call).
type unit struct {
	items []item
	vals  []sessions.Value
}

// unitItems, unitValues and unitBytes bound a unit of rows.
const (
	unitItems  = 256
	unitValues = 1024
	unitBytes  = 64 << 10
)

func (u *unitBuilder) add(it item, send func(*unit) error) error {
	if it.Open != nil || it.Err != nil {
		if err := u.flush(send); err != nil {
			return err
		}
		return send(&unit{items: []item{it}})
	}
	if u.pending != nil && len(u.pending.vals)+len(it.Values) > cap(u.pending.vals) {
		if err := u.flush(send); err != nil {
			return err
		}
	}
	if u.pending == nil {
		select {
		case u.pending = <-u.spare:
		default:
			u.pending = &unit{items: make([]item, 0, unitItems), vals: make([]sessions.Value, 0, unitValues)}
		}
	}
	p := u.pending
	if len(it.Values) > cap(p.vals) {
		it.Values = slices.Clone(it.Values) // a row wider than a unit
	} else {
		k := len(p.vals)
		p.vals = append(p.vals, it.Values...)
		it.Values = p.vals[k:len(p.vals):len(p.vals)]
	}
	p.items = append(p.items, it)
	for _, v := range it.Values {
		u.bytes += len(v.Text)
	}
	if len(p.items) >= unitItems || u.bytes >= unitBytes {
		return u.flush(send)
	}
	return nil
}

// flush sends what is pending; the worker owns the unit.
func (u *unitBuilder) flush(send func(*unit) error) error {
	if u.pending == nil || len(u.pending.items) == 0 {
		return nil
	}
	us := u.pending
	u.pending, u.bytes = nil, 0
	return send(us)
}

// handle reads the items of one unit, all of one source, and sends the
// collector one batch for them.
func (w *worker) handle(us []item) {
	if w.ctx.Err() != nil {
		return
	}
	if w.ex == nil {
		w.ex = &ref.Extractor{FoundAt: w.add, Text: w.text}
	}
	w.b = batch{source: us[0].source}
	for _, it := range us {
		if w.ctx.Err() != nil {
			break
		}
		w.item(it)
	}
	w.set.recordFlat(w.b.source, &w.flat)
	w.out <- w.b
	w.b = batch{}
}

// item reads one item into the batch being filled.
func (w *worker) item(it item) {
	for i := range w.recent {
		w.recent[i].used = false // their buffers are kept
	}
	w.next = 0
	w.tag = it.Tag
	b := &w.b
	switch {
	case it.Err != nil:
		b.prob = &Problem{Place: it.Place, Err: it.Err.Error()}
	case it.Open != nil:
		n, err := w.document(it)
		b.bytes += n
		if err != nil && it.Leftover && ref.IsSyntax(err) {
			// A leftover of an atomic write cut short is not a session and
			// not a problem, but it may be the only copy of one: the
			// retention rule reads every byte of it as text.
			b.asText = true
			err = w.leftoverText(it)
		}
		if err != nil {
			b.prob = &Problem{Place: it.Place, Err: err.Error()}
			if off := syntaxOffset(err); off >= 0 {
				b.prob.Place.Offset = off
			}
		}
	default:
		n := 0
		for _, v := range it.Values {
			it.Place.Column = v.Column // it is the worker's copy
			w.ex.Value(v.Text, it.Place)
			n += len(v.Text)
		}
		b.bytes += int64(n)
		if w.progress != nil {
			w.progress.Add(int64(n))
		}
	}
}

func (w *worker) document(it item) (int64, error) {
	rc, err := it.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	cr := &countingReader{r: rc, ctx: w.ctx, progress: w.progress}
	err = w.ex.Document(cr, it.Place)
	return cr.n, err
}

// leftoverChunk and leftoverOverlap: a leftover is given to Text in chunks
// that overlap by more than the longest file name and reference, so that no
// name is split between two of them.
const (
	leftoverChunk   = 4 << 20
	leftoverOverlap = 8 << 10
)

// leftoverText gives every byte of a leftover that is not whole JSON to Text.
func (w *worker) leftoverText(it item) error {
	if w.text == nil {
		return nil
	}
	rc, err := it.Open()
	if err != nil {
		return err
	}
	// Not JSON where it starts may be JSON compressed: a leftover's name
	// may not say it (a bucket object kept gzip-encoded).
	if rc, err = sessions.SniffDecompressed(rc, it.Place.Document); err != nil {
		return err
	}
	defer rc.Close()
	buf := make([]byte, leftoverChunk+leftoverOverlap)
	kept := 0
	for {
		n, err := io.ReadFull(ctxReader{w.ctx, rc}, buf[kept:])
		if n > 0 {
			w.text(buf[:kept+n])
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return err
		}
		kept = copy(buf, buf[kept+n-leftoverOverlap:kept+n])
	}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// add resolves a reference, records its blob in the shared set, and keeps it
// for the collector only when the report lists it or OnReference wants it.
func (w *worker) add(r ref.Reference, at *ref.At) {
	b := &w.b
	b.refs++
	if w.countOnly {
		return
	}
	// r is only valid during this call (ref.Extractor.FoundAt): what is kept
	// of it is cloned, in keep, in the blob set, or by recent.
	f := Found{Ref: r}
	if w.unrecorded {
		if !w.owns(f) {
			b.refs--
			return
		}
		f.Place, f.Tag = w.place(at), w.tag
		b.found = append(b.found, f.keep())
		return
	}
	for i := range w.recent {
		if e := &w.recent[i]; e.used && e.is(r) {
			// The same text again in this item (a tool call reading the
			// file the message holds): it changes nothing but counts.
			if len(w.stores) > 0 {
				b.byStatus[e.status]++
			}
			return
		}
	}
	for i, t := range w.stores {
		st, key := t.Resolver.Resolve(r)
		switch {
		case st == ref.Inside && f.Status == ref.Inside:
			f.alts = append(f.alts, located{i, key})
		case st == ref.Inside:
			f.Status, f.Key, f.store, f.Store = st, key, i, t.Store.Location()
		case f.Status != ref.Inside && (f.Status == 0 || precedence[st] > precedence[f.Status]):
			f.Status = st
		}
	}
	if len(f.alts) > 0 {
		w.set.locate(&f)
	}
	if !w.owns(f) {
		b.refs-- // another shard's
		return
	}
	var o recorded
	if k, id := w.set.blobID(w.exts, &f); len(w.stores) == 0 && id == "" {
		// Nothing to ask a store: recorded with the item's others, which
		// changes no count and nothing said about this reference.
		w.flat.keys = append(w.flat.keys, k)
		if len(w.flat.keys) == maxFlatBatch {
			w.set.recordFlat(b.source, &w.flat)
		}
	} else {
		o = w.set.record(k, id, b.source, &f)
	}
	if len(w.stores) > 0 {
		b.byStatus[f.Status]++
	}
	if o.statErr != nil {
		b.storeProbs = append(b.storeProbs, *o.statErr)
	}
	if o.newMissing {
		b.danglingBlobs++
	}
	f.Missing = o.missing
	if w.sendAll || f.Missing || f.Status == ref.Outside {
		f.Place, f.Tag = w.place(at), w.tag
		b.found = append(b.found, f.keep())
		return
	}
	if o.statErr == nil {
		// Recorded, and its blob's state final for this source: the same
		// reference again needs neither resolving nor recording.
		w.recent[w.next].set(r, f.Status)
		w.next = (w.next + 1) % len(w.recent)
	}
}

// place is where the reference at is, as the collector gets it.
func (w *worker) place(at *ref.At) ref.Place {
	if w.unitPlaces {
		return at.Unit()
	}
	return at.Place()
}

// keep is f with strings of its own, for the collector: the reference a
// worker is told about is only valid during the call.
func (f Found) keep() Found {
	f.Ref = f.Ref.Clone()
	f.Key = strings.Clone(f.Key)
	f.alts = nil // its keys may be views too; locate has settled them by now
	return f
}

// settled is a reference a worker recorded in the current item whose
// repetition there changes nothing but the counts, with its status. It keeps
// the reference's text in a buffer of its own, reused by the next.
type settled struct {
	text                      []byte // Raw, Path, Scheme, Bucket
	raw, path, scheme, bucket int    // their lengths
	kind                      ref.Kind
	status                    ref.Status
	used                      bool
}

func (e *settled) set(r ref.Reference, status ref.Status) {
	e.text = append(append(append(append(e.text[:0], r.Raw...), r.Path...), r.Scheme...), r.Bucket...)
	e.raw, e.path, e.scheme, e.bucket = len(r.Raw), len(r.Path), len(r.Scheme), len(r.Bucket)
	e.kind, e.status, e.used = r.Kind, status, true
}

// is reports whether r is the reference e holds, field by field.
func (e *settled) is(r ref.Reference) bool {
	if e.kind != r.Kind || e.raw != len(r.Raw) || e.path != len(r.Path) || e.scheme != len(r.Scheme) || e.bucket != len(r.Bucket) {
		return false
	}
	t := e.text
	return string(t[:e.raw]) == r.Raw && string(t[e.raw:e.raw+e.path]) == r.Path &&
		string(t[e.raw+e.path:e.raw+e.path+e.scheme]) == r.Scheme && string(t[e.raw+e.path+e.scheme:]) == r.Bucket
}

// located is a store and the key a reference names in it.
type located struct {
	store int
	key   string
}

// precedence orders the statuses of a reference that is inside no store: outside
// one of them is the finding worth reporting, unless it is in the runtime's own
// folder, which is more precise.
var precedence = map[ref.Status]int{ref.Elsewhere: 1, ref.Unanchored: 2, ref.Outside: 3, ref.Runtime: 4}

type countingReader struct {
	r        io.Reader
	n        int64
	ctx      context.Context
	progress Progress
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && n > 0 {
		c.progress.Add(int64(n))
	}
	return n, err
}

// collector runs in Run's goroutine: it owns the report. The workers record
// the blobs and ask the store; the collector adds up their counts and lists
// what they send.
type collector struct {
	opts Options
	rep  *Report
	set  *blobSet
}

func (c *collector) add(b batch) {
	sr := &c.rep.Sources[b.source]
	sr.Bytes += b.bytes
	if b.asText {
		sr.LeftoversAsText++
	}
	sr.References += b.refs
	c.rep.References += b.refs
	if b.prob != nil {
		c.problem(b.source, *b.prob)
	}
	if len(c.opts.Stores) > 0 {
		for st, n := range b.byStatus {
			if n > 0 {
				c.rep.ByStatus[ref.Status(st).String()] += n
			}
		}
	}
	c.rep.DanglingBlobs += b.danglingBlobs
	for _, p := range b.storeProbs {
		c.rep.Complete = false
		c.listProblem(p)
	}
	for _, f := range b.found {
		if !c.opts.CountOnly {
			switch {
			case f.Missing:
				c.rep.DanglingReferences++
				c.list(&c.rep.Dangling, f)
			case f.Status == ref.Outside && len(c.opts.Stores) > 0:
				c.list(&c.rep.Outside, f)
			}
		}
		if c.opts.OnReference != nil {
			c.opts.OnReference(f)
		}
	}
}

func (c *collector) problem(source int, p Problem) {
	c.rep.Sources[source].Problems++
	c.rep.Complete = false
	c.listProblem(p)
}

func (c *collector) listProblem(p Problem) {
	if len(c.rep.Problems) >= c.opts.MaxListed {
		c.rep.Truncated = true
		return
	}
	c.rep.Problems = append(c.rep.Problems, p)
}

func (c *collector) list(l *[]Found, f Found) {
	if len(*l) >= c.opts.MaxListed {
		c.rep.Truncated = true
		return
	}
	*l = append(*l, f)
}

func (c *collector) finish() {
	perSource, total := c.set.distinct(len(c.rep.Sources))
	for i := range c.rep.Sources {
		c.rep.Sources[i].DistinctBlobs = perSource[i]
	}
	c.rep.DistinctBlobs = total
	// Sort by place rendered once per entry, not once per comparison.
	byPlace := func(l []Found) {
		keys := make([]string, len(l))
		idx := make([]int, len(l))
		for i := range l {
			keys[i], idx[i] = l[i].Place.String(), i
		}
		sort.SliceStable(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })
		sorted := make([]Found, len(l))
		for i, k := range idx {
			sorted[i] = l[k]
		}
		copy(l, sorted)
	}
	byPlace(c.rep.Dangling)
	byPlace(c.rep.Outside)
	sort.SliceStable(c.rep.Problems, func(i, j int) bool { return c.rep.Problems[i].Place.String() < c.rep.Problems[j].Place.String() })
}

func syntaxOffset(err error) int64 {
	var se *jsonwalk.SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	return -1
}

// realDir is dir with symlinks resolved, when that differs: references may use
// either spelling.
func realDir(dir string) []string {
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != dir {
		return []string{r}
	}
	return nil
}

// owns says whether a resolved reference belongs to the worker's shard: by
// the store key it resolves to, or, outside every store (or without stores),
// by what it names.
func (w *worker) owns(f Found) bool {
	if !w.shard.Sharded() {
		return true
	}
	if len(w.stores) > 0 && f.Status == ref.Inside {
		return w.shard.Owns(f.Key)
	}
	return w.shard.Owns(identity(f.Ref))
}
