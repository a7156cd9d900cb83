// Package report says where a blob store's space goes, in one pass over the
// store and the sessions: what is referenced and what is orphaned, who owns
// it (package owner), how old it is, what kind and size of file it is, how
// fast it grows, and what each gc policy would free now.
//
// Run reads each store and every session once, as gc's plan does: one
// retain.Mark per store, whose scan also resolves every precise reference
// and hands it, with its place, to the owner attribution. It changes
// nothing. The policies are evaluated on the same retain.Retention that gc
// decides on, so "would free" is what `mediactl gc` with that policy would
// plan at this moment.
//
// A blob named by several owners is shared; an owner's exclusive bytes are
// those of the blobs only it names (what forgetting it would free). A blob
// the retention rule keeps but no precise reference names, and every
// reference in a unit the rule cannot attribute, count as unattributed: the
// owners' bytes, the shared bytes and the unattributed bytes add up to the
// referenced bytes.
//
// # Shards
//
// With Options.Shard, Run reports on one shard's blobs, and Merge makes the
// report of the whole store from the reports of all of them. A shard's
// report is made on the shard's blobs only: each store's listing keeps them
// (retain.MarkOptions.Shard), and so do the counts. Which figures of the N
// shards add up to the whole store's, and which do not, is what Merge
// relies on:
//
//   - Every blob is in exactly one shard, and so is every reference: the
//     shard of the key it resolves to (in the first store it resolves
//     inside), where the blob it names, or misses, is listed. Blob and byte
//     counts, an owner's referenced and exclusive blobs, the shared and the
//     unattributed ones, the references, dangling references and blobs, the
//     age, type and size tables, the growth, the policies but the size cap,
//     the trash and the marks (by the key a trashed or marked blob had) all
//     add up.
//   - A session unit may name blobs of several shards. Its units are
//     therefore counted over every reference the shard read, before it kept
//     its own: every shard reads every session, so each gives an owner the
//     same units, those of the whole store.
//   - A size cap decides over all the blobs at once, oldest first: no shard
//     can say what it would free, so a shard's report leaves it out. The
//     days until a file system is full are left out too: a shard grows by
//     its part of the store's growth only.
//
// The retention's read hands every reference to the attribution
// (retain.MarkOptions.AllReferences), not only those the scan can place in
// the shard by what they name: for a blob of an opaque name that is not its
// key's shard. The attribution places each by the listings (see attribute,
// in owners.go).
package report

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
	"github.com/mediactl/mediactl/pkg/verify"
)

// Options configure a report.
type Options struct {
	// Stores are the blob stores reported on, with their resolvers.
	Stores []scan.Target
	// Sources are the session sources that name the blobs.
	Sources []sessions.Source
	// Companion, when set, is the companion rule of a store (coffer's
	// sidecars): see retain.MarkOptions.Companion.
	Companion func(st store.Store) func(key string) (owner string, ok bool)
	// Owners is the attribution rule.
	Owners owner.Rule
	// Jobs is passed to the scan; 0 means one per CPU.
	Jobs int
	// Now is the report's time; zero means time.Now().
	Now time.Time
	// MinAge is the refcount policy's fence (gc's --min-age); zero means
	// retain.DefaultMinAge.
	MinAge time.Duration
	// MaxSize is the size cap evaluated (gc's --max-size); zero means half
	// of each store's bytes.
	MaxSize int64
	// Verify hashes every blob (verify's full check) to count corrupt ones.
	Verify bool
	// MaxListed caps the lists of the report (unattributed units,
	// problems); zero means 10,000.
	MaxListed int
	// Progress, when set, is told about session bytes read.
	Progress scan.Progress
	// Shard, when sharded, reports on that shard's blobs only (as gc and
	// verify split a store: retain.InShard). Every session is still read.
	Shard shard.Spec
}

// Report is what Run found.
type Report struct {
	// Now is when the report was made: ages are counted from it.
	Now time.Time `json:"now"`
	// Shard is the part of the store reported on, "K/N" ("" for all of it).
	Shard string `json:"shard,omitempty"`
	// Merged is set on a report Merge made of shards' reports.
	Merged *Merged `json:"merged,omitempty"`
	// Notes say what a shard's or a merged report leaves out, and how it
	// counts what does not add up over shards.
	Notes   []string            `json:"notes,omitempty"`
	Sources []scan.SourceReport `json:"sources"`
	Stores  []*StoreReport      `json:"stores"`
	Totals  Totals              `json:"totals"`
	Owners  []*OwnerStats       `json:"owners"`
	// OwnerCount is how many owners there are (Owners may be cut by a
	// presenter's --top; the report always holds all of them).
	OwnerCount   int          `json:"owner_count"`
	Unattributed Unattributed `json:"unattributed"`
	// Rule says how owners were attributed: "forge", "coffer", "file or row",
	// "pointer /…", "column …".
	Rule     string   `json:"owner_rule"`
	Problems []string `json:"problems"`
	// Truncated is set when a list was cut at MaxListed.
	Truncated   bool `json:"truncated,omitempty"`
	Complete    bool `json:"complete"`
	Interrupted bool `json:"interrupted,omitempty"`
}

// Count is a number of blobs and their bytes.
type Count struct {
	Blobs int64 `json:"blobs"`
	Bytes int64 `json:"bytes"`
}

func (c *Count) add(size int64) { c.Blobs++; c.Bytes += size }

// Totals add up the stores.
type Totals struct {
	Stored     Count `json:"stored"`
	Referenced Count `json:"referenced"`
	Orphaned   Count `json:"orphaned"`
	InTrash    Count `json:"in_trash"`
	Marked     Count `json:"marked"`
	// Shared are the referenced blobs more than one owner names.
	Shared             Count `json:"shared"`
	DanglingReferences int64 `json:"dangling_references"`
	DanglingBlobs      int64 `json:"dangling_blobs"`
	// Corrupt is set with Options.Verify.
	Corrupt *Count `json:"corrupt,omitempty"`
}

// OwnerStats is what one owner holds, over all the stores.
type OwnerStats struct {
	ID    string `json:"id"`
	Agent string `json:"agent,omitempty"`
	// Units are the session units (documents, rows) attributed to it.
	Units      int64 `json:"units"`
	References int64 `json:"references"`
	// Referenced are the distinct blobs its units name; Exclusive those
	// no other owner (nor an unattributed unit) names.
	Referenced Count `json:"referenced"`
	Exclusive  Count `json:"exclusive"`
	// LastActivity is the newest time of its units (file modification
	// time, a row's updated_at or created_at), when one is known.
	LastActivity *time.Time `json:"last_activity,omitempty"`
}

// Unattributed is what no owner could be given.
type Unattributed struct {
	// Units counts the session units with references that the rule could
	// not attribute; UnitList names them (cut at MaxListed).
	Units      int64        `json:"units"`
	UnitList   []owner.Unit `json:"unit_list"`
	References int64        `json:"references"`
	// Referenced are the blobs those units name.
	Referenced Count `json:"referenced"`
	// TextOnly are blobs the retention rule keeps although no precise
	// reference names them (a name in prose, a hex id in a column).
	TextOnly Count `json:"text_only"`
	// Exclusive are the blobs only unattributed units (or text) name.
	Exclusive Count `json:"exclusive"`
}

// ErrNoStore is returned by Run without a store.
var ErrNoStore = errors.New("report: no store given")

// Outcome is what the report came to: incomplete when a store or a session
// could not be read in full (its counts are partial), found when references
// dangle or blobs are corrupt.
func (r *Report) Outcome() outcome.Outcome {
	switch {
	case r.Interrupted:
		return outcome.Interrupted
	case !r.Complete:
		return outcome.Incomplete
	case r.Totals.DanglingReferences > 0 || r.Totals.Corrupt != nil && r.Totals.Corrupt.Blobs > 0:
		return outcome.Found
	}
	return outcome.OK
}

// ErrShardedCap is Validate's error for a size cap on a shard: a cap
// decides over all the blobs at once, which no shard sees.
var ErrShardedCap = errors.New("report: a size cap (MaxSize) is evaluated on the whole store, not on a shard")

// Validate checks the options before anything is read.
func (o *Options) Validate() error {
	switch {
	case len(o.Stores) == 0:
		return ErrNoStore
	case len(o.Sources) == 0:
		return errors.New("report: no session source given")
	case o.MaxSize > 0 && o.Shard.Sharded():
		return ErrShardedCap
	}
	return nil
}

// Run makes the report. It returns an error only for invalid options;
// what could not be read is in the report, which is then incomplete.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.Stores = append([]scan.Target(nil), opts.Stores...)
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 10000
	}
	switch opts.MinAge {
	case 0:
		opts.MinAge = retain.DefaultMinAge
	case retain.NoMinAge:
		opts.MinAge = 0
	}
	rep := &Report{Now: opts.Now.UTC(), Complete: true, Problems: []string{}, Owners: []*OwnerStats{},
		Unattributed: Unattributed{UnitList: []owner.Unit{}}, Rule: ruleName(opts.Owners), Shard: opts.Shard.String()}
	sharded := opts.Shard.Sharded()
	if sharded {
		rep.Notes = shardNotes
	}
	attr := owner.NewAttributor(opts.Owners)
	refs := owner.NewReferences()
	companions := make([]func(string) (string, bool), len(opts.Stores))
	for i, t := range opts.Stores {
		if opts.Companion != nil {
			companions[i] = opts.Companion(t.Store)
		}
		if t.Resolver == nil {
			opts.Stores[i].Resolver = scan.NewResolver(t.Store, nil)
		}
	}

	// The first store's mark reads the sessions through the attribution
	// and hands every reference to it, to be resolved against the listings
	// afterwards without a stat per key; a further store's mark reads them
	// again for its own retention, as gc does per store. A shard's marks
	// keep its blobs, but hand over every reference: which blob a reference
	// names is known only from the listings, and an owner's units are
	// counted over all of them.
	wrapped := make([]sessions.Source, len(opts.Sources))
	for i, s := range opts.Sources {
		wrapped[i] = attr.Wrap(s)
	}
	rets := make([]*retain.Retention, len(opts.Stores))
	// markProblems are each store's problems of its mark (the listing, the
	// sessions' read): its counts stand on them, and its metrics say them.
	markProblems := make([][]string, len(opts.Stores))
	for i, t := range opts.Stores {
		mo := retain.MarkOptions{Jobs: opts.Jobs, MaxListed: opts.MaxListed, Companion: companions[i], Shard: opts.Shard}
		srcs := opts.Sources
		if i == 0 {
			srcs = wrapped
			mo.OnReference, mo.UnitPlaces, mo.AllReferences, mo.Progress = refs.Add, true, true, opts.Progress
		}
		r, err := retain.Mark(ctx, t.Store, srcs, mo)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		rets[i] = r
		if !r.Complete {
			rep.Complete = false
			markProblems[i] = append(markProblems[i], r.Problems...)
		}
		if len(r.Nested) > 0 {
			markProblems[i] = append(markProblems[i], fmt.Sprintf("%s holds another store's internal folder in %v: its blobs are counted as this store's", r.Store, r.Nested))
		}
		rep.Problems = append(rep.Problems, markProblems[i]...)
		if i == 0 && r.Scan != nil {
			rep.Sources = r.Scan.Sources
			rep.Interrupted = r.Scan.Interrupted
		}
		if ctx.Err() != nil {
			rep.Interrupted, rep.Complete = true, false
			break
		}
	}
	if rep.Interrupted {
		rep.Complete = false
		return rep, nil
	}

	var inShard func(store int32, key string) bool
	if sharded {
		inShard = func(store int32, key string) bool { return retain.InShard(opts.Shard, key, companions[store]) }
	}
	own := attribute(attr, refs, opts.Stores, rets, inShard, opts.MaxListed, rep)
	for i, t := range opts.Stores {
		sr := storeReport(ctx, t.Store, rets[i], own.perStore[i], companions[i], opts)
		rep.Stores = append(rep.Stores, sr)
		if !sr.Complete {
			rep.Complete = false
			rep.Problems = append(rep.Problems, sr.Problems...)
		}
		if len(markProblems[i]) > 0 {
			sr.Problems = append(markProblems[i], sr.Problems...)
			sr.Complete = sr.Complete && rets[i].Complete
		}
		rep.Totals.addStore(sr)
	}
	if ctx.Err() != nil {
		rep.Interrupted, rep.Complete = true, false
	}
	return rep, nil
}

// shardNotes are the notes of a shard's report.
var shardNotes = []string{
	"a shard's report counts its blobs only; merge the reports of every shard of the split (mediactl report merge) for the whole store",
	"units count an owner's session units over the whole store: every shard reads every session, and one unit may name blobs of several shards",
	NoteSizeCap,
	"days until full are left out: a shard grows by its part of the store's growth; the merged report reckons them from the whole growth",
}

// NoteSizeCap is the note of a shard's or a merged report on the size cap
// policy, which it leaves out.
const NoteSizeCap = "the max-size policy is left out: a size cap decides over all the blobs at once, oldest first, which no shard sees; run report without --shard for it"

func (t *Totals) addStore(sr *StoreReport) {
	sum := func(a *Count, b Count) { a.Blobs += b.Blobs; a.Bytes += b.Bytes }
	sum(&t.Stored, sr.Stored)
	sum(&t.Referenced, sr.Referenced)
	sum(&t.Orphaned, sr.Orphaned)
	sum(&t.InTrash, sr.InTrash)
	sum(&t.Marked, sr.Marked)
	sum(&t.Shared, sr.Shared)
	if sr.Corrupt != nil {
		if t.Corrupt == nil {
			t.Corrupt = &Count{}
		}
		sum(t.Corrupt, *sr.Corrupt)
	}
}

func ruleName(r owner.Rule) string {
	switch {
	case r.Pointer != "":
		return "pointer " + r.Pointer
	case r.Column != "":
		return "column " + r.Column
	case r.Layout == "forge":
		return "forge: the task"
	case r.Layout == "coffer":
		return "coffer: the conversation"
	}
	return "user_id, agent-inputs/{user_id}/…, else the file or row"
}

// verifyStore counts corrupt blobs by hashing every one (of the shard).
func verifyStore(ctx context.Context, st store.Store, jobs int, sh shard.Spec, companion func(string) (string, bool)) (*Count, error) {
	v, err := verify.Run(ctx, verify.Options{Store: st, Jobs: jobs, MaxListed: 1, KeepCorrupt: true, Shard: sh, Companion: companion})
	if err != nil {
		return nil, err
	}
	c := &Count{}
	for _, r := range v.AllCorrupt {
		c.add(r.Size)
	}
	if !v.Complete {
		return c, fmt.Errorf("verify of %s is incomplete (%d unreadable blobs%s)", st.Location(), v.Counts[verify.Unreadable], listErr(v.ListError))
	}
	return c, nil
}

func listErr(s string) string {
	if s == "" {
		return ""
	}
	return "; listing: " + s
}

// trashOf counts a store's trash runs and marks. A shard counts the
// trashed and marked blobs whose key is its own, and every run.
func trashOf(ctx context.Context, st store.Store, sh shard.Spec) (runs int, in, marked Count, err error) {
	rs, err := trash.Runs(ctx, st)
	if !sh.Sharded() {
		for _, r := range rs {
			in.Blobs += r.Blobs
			in.Bytes += r.Bytes
		}
	} else if err == nil {
		err = trash.EachTrashed(ctx, st, func(_ trash.RunRecord, b trash.Trashed) error {
			if sh.Owns(b.Key) {
				in.add(b.Size)
			}
			return nil
		})
	}
	if err != nil {
		return len(rs), in, marked, err
	}
	ms, err := trash.Marks(ctx, st)
	for _, m := range ms {
		for _, x := range m.Marks {
			if sh.Owns(x.Key) {
				marked.add(x.Size)
			}
		}
	}
	return len(rs), in, marked, err
}
