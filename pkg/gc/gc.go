// Package gc reclaims blobs that no session needs any more, without ever
// losing one that is still in use.
//
// Work is split restic-style into a plan and its execution. MakePlan reads the
// store and every session, and lists the candidates with their sizes; it
// changes nothing. Execute is the only code that removes blobs, and it refuses
// a plan that did not read everything. Removal is reversible by default: a
// blob is moved into the store's trash (one folder per run) and Restore puts a
// run back.
//
// A plan is built for stores of millions of blobs: it keeps about 60 bytes per
// blob (its retain.Retention: a content-addressed key as its 32-byte digest in
// a retain.Index, size and time in flat arrays) and its candidates as ids into
// them, 4 bytes each. Keys are rendered when asked for: Plan.Candidates.All,
// the JSON encoding (Candidates.WriteJSON streams it), and Execute, one batch
// at a time.
//
// # The retention model
//
// One decision, made by retain.Mark, says which blobs every removing path
// must keep: MakePlan (refcount, age with KeepReferenced, size cap), verify's
// orphan count and migrate's --delete-source all read the same
// retain.Retention. Package retain holds the rule, the marking and the
// decision; gc only chooses among the blobs it lets go. A blob is kept when
//   - some string of some session names it under the retention rule (its
//     digest or long hex part anywhere, or its stem's words in order;
//     conservative, a false "kept" only costs space), or
//   - it is in a group (an owner and its companions, Options.Companion) of
//     which a session names a member, or
//   - it, or a member of its group, was modified less than the minimum age
//     before the run started (retain.DefaultMinAge): it may belong to a
//     session that is not saved yet.
//
// A retention that did not read the whole listing and every session is
// incomplete, and no path removes anything on it. migrate's --delete-source
// asks for more on top: a proven copy, still present with its digest, and no
// precise reference into the store; text naming the copy itself
// (retain.MarkOptions.CopiedTo) does not keep the source.
//
// The rules that keep data safe:
//   - retain.Retention is the model above, and the same for every path.
//   - A plan that could not read every session or the whole listing is
//     incomplete, and Execute refuses it.
//   - The plan's start is a fence: a blob modified after fence − MinAge is never
//     a candidate (a blob is written before the session that names it is
//     saved). Each blob is stat'ed again right before it is moved, and skipped
//     if it changed.
//   - Symbolic links and other non-regular files are never candidates, and
//     neither is anything outside the store root (store keys cannot leave it).
package gc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
)

// PlanGCPercent is the GOGC that `mediactl gc` runs MakePlan with, unless
// GOGC is set; it lives here so that the command and this package's
// benchmark measure the same setting. A plan holds a few large arrays
// without pointers (about 60 bytes per blob), which the collector marks at
// almost no cost, while the session scan churns through short-lived garbage.
// The heap may grow by GOGC percent of the live heap between collections: at
// the command's usual 50 that is half the arrays again, at 20 a fifth.
const PlanGCPercent = 20

// Policy chooses the candidates.
type Policy string

const (
	// Refcount: blobs no session refers to, older than MinAge.
	Refcount Policy = "refcount"
	// Age: blobs older than MaxAge, referenced or not (unless KeepReferenced).
	Age Policy = "age"
)

// Options configure a plan.
type Options struct {
	Store store.Store
	// Sessions are read to find references. Refcount needs them; Age needs them
	// with KeepReferenced, and without it uses them to count the references its
	// plan leaves dangling.
	Sessions []sessions.Source
	// Bases are directories that relative references are relative to.
	Bases  []string
	Policy Policy
	// MinAge: no blob modified less than MinAge before the plan started is a
	// candidate (refcount and size cap). Zero means retain.DefaultMinAge
	// (24h); retain.NoMinAge means no fence.
	MinAge time.Duration
	// MaxAge: the age policy's limit.
	MaxAge time.Duration
	// KeepReferenced: the age policy keeps blobs that sessions refer to.
	KeepReferenced bool
	// MaxSize, when > 0, caps the store: unreferenced candidates are taken
	// oldest first until the store would be at most MaxSize bytes; referenced
	// blobs are never taken. With Refcount only.
	MaxSize int64
	// Jobs is passed to the session scan.
	Jobs int
	// Now is the fence; zero means time.Now().
	Now time.Time
	// Companion, when set, names the owner of a key that lives and dies with
	// another blob (coffer's content/chat-media/<id>.json beside its upload):
	// when the owner is a blob of the store, the two are kept together and
	// are candidates together (see retain.Retention.KeptID); when it is not,
	// the key follows the rule on its own. An empty owner with ok says the
	// rule cannot tell (its folder could not be listed): the plan is then
	// incomplete and removes nothing.
	Companion func(key string) (owner string, ok bool)
	// Shard, when sharded, plans for that shard's blobs only (see package
	// shard): the plans of all N shards together are the plan of the whole
	// store. A size cap is refused with a shard, since a cap is a decision
	// about all the blobs at once (ErrShardedCap).
	Shard shard.Spec

	// trash, when set, is the store's trash, marked by the plan's own read
	// of the sessions (runStore checks it before it removes anything).
	trash *trashIndex
}

// ErrShardedCap is returned by MakePlan for a size cap on one shard.
var ErrShardedCap = errors.New("gc: a size cap decides over the whole store at once, so it cannot be planned for one shard")

// Candidate is a blob the plan would remove.
type Candidate struct {
	Key        string    `json:"key"`
	Size       int64     `json:"size"`
	ModTime    time.Time `json:"mod_time"`
	Referenced bool      `json:"referenced,omitempty"`
}

// Plan is what a run would remove, and why it may or may not.
type Plan struct {
	Store  string `json:"store"`
	Policy Policy `json:"policy"`
	// Shard is the part of the store planned for, "K/N" ("" for all of it).
	Shard string `json:"shard,omitempty"`
	// Fence is when planning started; Cutoff the newest modification time a
	// candidate may have.
	Fence  time.Time `json:"fence"`
	Cutoff time.Time `json:"cutoff"`

	Blobs      int64 `json:"blobs"`      // regular blobs in the store
	Bytes      int64 `json:"bytes"`      // their bytes
	Referenced int64 `json:"referenced"` // blobs sessions refer to (when sessions were read)

	// Candidates are the blobs to remove, oldest first.
	Candidates     Candidates `json:"candidates"`
	CandidateBytes int64      `json:"candidate_bytes"`
	// ReferencedCandidates counts candidates that sessions refer to (age policy
	// without KeepReferenced): their references will dangle.
	ReferencedCandidates int64     `json:"referenced_candidates"`
	Oldest               time.Time `json:"oldest,omitempty"`
	Newest               time.Time `json:"newest,omitempty"`

	// MaxSize, when set: the store's size after the plan, and whether the cap
	// is met (it is not when referenced or young blobs alone exceed it).
	MaxSize   int64 `json:"max_size,omitempty"`
	SizeAfter int64 `json:"size_after"`
	CapMet    bool  `json:"cap_met"`

	SessionsRead bool         `json:"sessions_read"`
	Scan         *scan.Report `json:"scan,omitempty"`
	// Complete is false when a session or the listing could not be read in
	// full: Execute refuses such a plan.
	Complete bool     `json:"complete"`
	Problems []string `json:"problems"`
	// Nested are folders of the store that hold another store's internal
	// folder (its trash, lock, journals): Check refuses the plan, since that
	// store's trash would be swept as blobs of this one.
	Nested []string `json:"nested_stores,omitempty"`

	// keepReferenced: the plan keeps every blob a session names (refcount,
	// or age with KeepReferenced), so a session naming a removed blob is a
	// reason to put it back.
	keepReferenced bool
}

// ErrIncomplete is returned by Execute for a plan that did not read everything.
var ErrIncomplete = errors.New("the plan is incomplete: not everything could be read, so nothing may be deleted")

// MakePlan reads the store and the sessions and decides the candidates. It
// changes nothing. It is part of the package's API although the command
// goes through Run: a caller that wants to see what gc would remove, or to
// check and execute a plan of its own under the store's lock (Plan.Check,
// Plan.Execute), starts here (see the package example).
func MakePlan(ctx context.Context, opts Options) (*Plan, error) {
	if opts.Store == nil {
		return nil, errors.New("gc: no store")
	}
	if opts.Policy == "" {
		opts.Policy = Refcount
	}
	switch opts.MinAge {
	case 0:
		opts.MinAge = retain.DefaultMinAge
	case retain.NoMinAge:
		opts.MinAge = 0
	}
	needSessions := opts.Policy == Refcount || opts.KeepReferenced || opts.MaxSize > 0
	switch {
	case opts.Policy != Refcount && opts.Policy != Age:
		return nil, fmt.Errorf("gc: unknown policy %q (refcount or age)", opts.Policy)
	case opts.Policy == Age && opts.MaxAge <= 0:
		return nil, errors.New("gc: the age policy needs a max age")
	case opts.MaxSize > 0 && opts.Policy != Refcount:
		return nil, errors.New("gc: a size cap works with the refcount policy")
	case opts.MaxSize > 0 && opts.Shard.Sharded():
		return nil, ErrShardedCap
	case needSessions && len(opts.Sessions) == 0:
		return nil, errors.New("gc: this policy needs the sessions, to know which blobs are referenced")
	case opts.MinAge < 0:
		return nil, errors.New("gc: min age cannot be negative")
	}
	fence := opts.Now
	if fence.IsZero() {
		fence = time.Now()
	}
	p := &Plan{Store: opts.Store.Location(), Policy: opts.Policy, Shard: opts.Shard.String(), Fence: fence, Complete: true, Problems: []string{}, MaxSize: opts.MaxSize,
		keepReferenced: opts.Policy == Refcount || opts.KeepReferenced}
	switch opts.Policy {
	case Refcount:
		p.Cutoff = fence.Add(-opts.MinAge)
	case Age:
		p.Cutoff = fence.Add(-opts.MaxAge)
	}

	// Mark: every blob into the index, then every session string marks it.
	mo := retain.MarkOptions{Jobs: opts.Jobs, Companion: opts.Companion, Shard: opts.Shard}
	if opts.trash != nil {
		mo.Also = opts.trash.Mark
	}
	r, err := retain.Mark(ctx, opts.Store, opts.Sessions, mo)
	if err != nil {
		return nil, err
	}
	p.Blobs, p.Bytes = r.Blobs, r.Bytes
	p.Scan, p.SessionsRead = r.Scan, r.SessionsRead
	p.Complete = r.Complete
	p.Problems = append(p.Problems, r.Problems...)
	p.Referenced = r.Kept
	p.Nested = r.Nested

	// Sweep decision. A candidate is its id, with the referenced bit; two
	// passes, so that the list is allocated once, at its size.
	candidate := func(i int) (id uint32, ok bool) {
		referenced := r.KeptID(i)
		switch {
		case r.Young(i, p.Cutoff):
			return 0, false // young: its session may not be saved yet
		case opts.Policy == Refcount && referenced:
			return 0, false
		case opts.Policy == Age && opts.KeepReferenced && referenced:
			return 0, false
		case referenced:
			return uint32(i) | referencedBit, true
		}
		return uint32(i), true
	}
	n := 0
	for i := range r.Len() {
		if _, ok := candidate(i); ok {
			n++
		}
	}
	ids := make([]uint32, 0, n)
	for i := range r.Len() {
		if id, ok := candidate(i); ok {
			ids = append(ids, id)
		}
	}
	r.SortByTime(ids, referencedBit)
	p.SizeAfter = p.Bytes
	if opts.MaxSize > 0 {
		// Oldest first, only as many as it takes to get under the cap.
		ids, p.SizeAfter = r.TakeOldest(ids, referencedBit, p.SizeAfter, opts.MaxSize)
		p.CapMet = p.SizeAfter <= opts.MaxSize
	} else {
		for _, id := range ids {
			p.SizeAfter -= r.Size(int(id &^ referencedBit))
		}
	}
	for _, id := range ids {
		p.CandidateBytes += r.Size(int(id &^ referencedBit))
		if id&referencedBit != 0 {
			p.ReferencedCandidates++
		}
	}
	p.Candidates = Candidates{ids: ids, r: r}
	if n := len(ids); n > 0 {
		p.Oldest, p.Newest = p.Candidates.At(0).ModTime, p.Candidates.At(n-1).ModTime
	}
	return p, nil
}

// Guards are the checks a plan must pass before Execute acts on it. Each one
// refuses by default; its override is an explicit choice of the operator.
type Guards struct {
	// AllowNoReferences lets a plan proceed that found no reference to any
	// of this store's blobs while the store has blobs and sessions were read:
	// that is exactly what a wrong session source looks like.
	AllowNoReferences bool
	// MaxDeleteCount and MaxDeletePercent cap the plan (0: no cap of that kind).
	MaxDeleteCount   int64
	MaxDeletePercent float64
}

// Guard names a check of Guards (or the plan's own) that refused.
type Guard string

const (
	// NoReferences: the sessions name none of the store's blobs.
	NoReferences Guard = "no-references"
	// MaxDeleteCount and MaxDeletePercent: the plan removes more than allowed.
	MaxDeleteCount   Guard = "max-delete-count"
	MaxDeletePercent Guard = "max-delete-percent"
)

// RefusedError is a guard's refusal, with the numbers it judged: the CLI
// words the override from them.
type RefusedError struct {
	Guard      Guard   `json:"guard"`
	Store      string  `json:"store"`
	Blobs      int64   `json:"blobs"`      // regular blobs in the store
	Candidates int64   `json:"candidates"` // blobs the plan removes
	Limit      float64 `json:"limit,omitempty"`
}

func (e *RefusedError) Error() string {
	switch e.Guard {
	case NoReferences:
		return fmt.Sprintf("the sessions hold no reference to any of the store's %d blobs", e.Blobs)
	case MaxDeleteCount:
		return fmt.Sprintf("the plan removes %d blobs, more than the limit of %g", e.Candidates, e.Limit)
	}
	return fmt.Sprintf("the plan removes %d of %d blobs (%.1f%%), more than the limit of %g%%", e.Candidates, e.Blobs, e.Percent(), e.Limit)
}

// Percent is the share of the store the plan removes.
func (e *RefusedError) Percent() float64 {
	if e.Blobs == 0 {
		return 0
	}
	return 100 * float64(e.Candidates) / float64(e.Blobs)
}

// NestedStoreError is Check's error for a store that contains another
// store's internal folder. Unlike a guard it has no override: point the run
// at one store.
type NestedStoreError struct {
	Store  string
	Nested []string // folders, relative to the store, that hold one
}

func (e *NestedStoreError) Error() string {
	return fmt.Sprintf("the store %s contains another store (its %s folder) in %s", e.Store, store.InternalDir, strings.Join(e.Nested, ", "))
}

// Check applies the guards. It returns ErrIncomplete for an incomplete plan,
// a *NestedStoreError for a store holding another, and a *RefusedError when
// a guard refuses.
func (p *Plan) Check(g Guards) error {
	if !p.Complete {
		return fmt.Errorf("%w (%s)", ErrIncomplete, strings.Join(p.Problems, "; "))
	}
	if len(p.Nested) > 0 {
		return &NestedStoreError{Store: p.Store, Nested: p.Nested}
	}
	n := int64(p.Candidates.Len())
	refused := &RefusedError{Store: p.Store, Blobs: p.Blobs, Candidates: n}
	// Per store: sessions that name other stores' blobs say nothing about
	// whether they were meant to name this one's.
	if p.SessionsRead && p.Blobs > 0 && p.Referenced == 0 && !g.AllowNoReferences {
		refused.Guard = NoReferences
		return refused
	}
	if g.MaxDeleteCount > 0 && n > g.MaxDeleteCount {
		refused.Guard, refused.Limit = MaxDeleteCount, float64(g.MaxDeleteCount)
		return refused
	}
	if g.MaxDeletePercent > 0 && p.Blobs > 0 && refused.Percent() > g.MaxDeletePercent {
		refused.Guard, refused.Limit = MaxDeletePercent, g.MaxDeletePercent
		return refused
	}
	return nil
}
