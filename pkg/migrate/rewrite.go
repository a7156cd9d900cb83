package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// RewriteOptions configure Rewrite.
type RewriteOptions struct {
	Sources  []sessions.Rewriter
	Replacer *Replacer
	// Journal receives a "rewrite" record for every unit, made durable before
	// the unit is written.
	Journal *Journal
	// MaxListed caps the lists of the report; 0 means 10,000.
	MaxListed int
	// MinIdle leaves session files alone that were modified less than this long
	// ago: a session the agent is writing right now could be saved again from
	// the agent's memory (undoing the rewrite) or, worse, read by the agent in
	// the instant the new version is being installed. They are listed as busy;
	// a later run rewrites them. Rows of a database need no such wait: each
	// update there is a compare-and-swap inside a transaction.
	MinIdle time.Duration
	// Now is the reference time of MinIdle; zero means time.Now().
	Now time.Time
}

// UnitNote is a session unit, or a reference in one, that was left as it was.
type UnitNote struct {
	Place  ref.Place `json:"place"`
	Reason string    `json:"reason"`
}

// RewriteReport says what Rewrite (or Rollback) changed.
type RewriteReport struct {
	Units      int64 `json:"units"`      // documents and values read
	Changed    int64 `json:"changed"`    // units written
	References int64 `json:"references"` // references rewritten (or restored)
	Retried    int64 `json:"retried"`    // units re-read because another writer changed them
	// Kept counts references to migrated blobs left pointing at the source
	// ({bucket, path} pairs, text that could not be placed), and Problems the
	// units left untouched (malformed, changing on every attempt, unwritable).
	Kept        int64      `json:"kept"`
	KeptList    []UnitNote `json:"kept_list"`
	Problems    int64      `json:"problems"`
	ProblemList []UnitNote `json:"problem_list"`
	// Busy counts session files left alone because they were modified within
	// MinIdle; run again later.
	Busy        int64      `json:"busy"`
	BusyList    []UnitNote `json:"busy_list"`
	Interrupted bool       `json:"interrupted"`
	maxListed   int
	mu          sync.Mutex
}

// Complete reports whether every unit was read and every intended change made.
func (r *RewriteReport) Complete() bool { return !r.Interrupted && r.Problems == 0 && r.Busy == 0 }

func (r *RewriteReport) note(count *int64, list *[]UnitNote, n UnitNote) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*count++
	if len(*list) < r.maxListed {
		*list = append(*list, n)
	}
}

func newRewriteReport(maxListed int) *RewriteReport {
	if maxListed <= 0 {
		maxListed = defaultMaxListed
	}
	return &RewriteReport{KeptList: []UnitNote{}, ProblemList: []UnitNote{}, BusyList: []UnitNote{}, maxListed: maxListed}
}

// rewriteSessions replaces, in every source, each reference to a migrated blob by the
// new text opts.Replacer gives. Every unit's replacements go to the journal,
// synced, before the unit is written. Units that cannot be handled (malformed
// JSON, changed by another writer on every attempt) are left as they are and
// listed; the sources' blobs they point at then stay referenced.
func rewriteSessions(ctx context.Context, opts RewriteOptions) (*RewriteReport, error) {
	rep := newRewriteReport(opts.MaxListed)
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	// The replacements of each unit between its Edit and its Prepare (a batch
	// of rows is edited before it is prepared). The rewriters call Edit,
	// Prepare and Committed one at a time, so the map needs no lock.
	pending := map[string][]Replacement{}
	// The references each unit keeps, by its last edit: a unit retried
	// because another writer changed it is counted once, as it was last seen.
	kept := map[string][]UnitNote{}
	var keptOrder []string
	edit := func(place ref.Place, old []byte) ([]byte, error) {
		id := unitID(place)
		delete(pending, id) // a retry edits fresh bytes
		if _, seen := kept[id]; !seen {
			keptOrder = append(keptOrder, id)
		}
		kept[id] = nil
		ue, err := opts.Replacer.Find(place, old)
		if err != nil {
			rep.note(&rep.Problems, &rep.ProblemList, UnitNote{place, err.Error()})
			return nil, nil
		}
		if len(ue.Edits) > 0 && opts.MinIdle > 0 && place.Table == "" && place.Document != "" {
			if fi, err := os.Lstat(place.Document); err == nil && now.Sub(fi.ModTime()) < opts.MinIdle {
				rep.note(&rep.Busy, &rep.BusyList, UnitNote{place, fmt.Sprintf("modified %s ago, less than the idle time %s: the agent may be writing it; run again later", now.Sub(fi.ModTime()).Round(time.Second), opts.MinIdle)})
				return nil, nil
			}
		}
		for _, k := range ue.Kept {
			kept[id] = append(kept[id], UnitNote{place, k})
		}
		if len(ue.Edits) == 0 {
			return nil, nil
		}
		out, err := applyEdits(old, ue.Edits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", place, err)
		}
		pending[id] = ue.Edits
		return out, nil
	}
	prepare := func(c sessions.Change) error {
		edits := pending[unitID(c.Place)]
		if edits == nil {
			return fmt.Errorf("%s: a change nobody asked for", c.Place)
		}
		place := c.Place
		return opts.Journal.appendSync(Record{T: RecordRewrite, Place: &place, OldSHA256: sha256Hex(c.Old), NewSHA256: sha256Hex(c.New), Edits: edits})
	}
	committed := func(c sessions.Change) {
		id := unitID(c.Place)
		rep.References += int64(len(pending[id]))
		delete(pending, id)
	}
	err := runRewriters(ctx, opts.Sources, rep, edit, sessions.RewriteOptions{Prepare: prepare, Committed: committed})
	for _, id := range keptOrder {
		for _, n := range kept[id] {
			rep.note(&rep.Kept, &rep.KeptList, n)
		}
	}
	return rep, err
}

// runRewriters runs edit over every source. Problems confined to units are
// noted in rep; an error stops everything.
func runRewriters(ctx context.Context, srcs []sessions.Rewriter, rep *RewriteReport, edit sessions.Edit, ro sessions.RewriteOptions) error {
	for _, src := range srcs {
		counts, err := src.Rewrite(ctx, edit, ro)
		rep.Units += counts.Units
		rep.Changed += counts.Changed
		rep.Retried += counts.Retried
		var re *sessions.RewriteError
		if errors.As(err, &re) {
			for _, u := range re.Units {
				if errors.Is(u.Err, sessions.ErrInUse) {
					// Like a file modified within the idle time: the agent
					// is at it.
					rep.note(&rep.Busy, &rep.BusyList, UnitNote{u.Place, u.Err.Error()})
					continue
				}
				rep.note(&rep.Problems, &rep.ProblemList, UnitNote{u.Place, u.Err.Error()})
			}
		}
		if err != nil && (re == nil || err != error(re)) {
			// Not only units left alone: the source failed or the run stopped.
			if ctx.Err() != nil {
				rep.Interrupted = true
			}
			return fmt.Errorf("rewrite %s: %w", src, err)
		}
	}
	return nil
}

// rollbackSessions restores, in every source, each unit the journal says was
// rewritten, undoing its rewrites newest first (see revertAll): byte for byte
// when the unit is as the rewrites left it, reference by reference when it
// changed since (see revertRewrite). Units the journal lists
// that no source holds any more are reported as problems.
func rollbackSessions(ctx context.Context, srcs []sessions.Rewriter, j *Journal, maxListed int) (*RewriteReport, error) {
	rep := newRewriteReport(maxListed)
	st := j.State()
	seen := map[string]bool{}
	restored := map[string]int64{}
	edit := func(place ref.Place, cur []byte) ([]byte, error) {
		id := unitID(place)
		recs := st.Units[id]
		if len(recs) == 0 {
			return nil, nil
		}
		seen[id] = true
		out, n, err := revertAll(cur, recs)
		if err != nil {
			rep.note(&rep.Problems, &rep.ProblemList, UnitNote{place, err.Error()})
			return nil, nil
		}
		if out != nil {
			restored[id] = n
		}
		return out, nil
	}
	prepare := func(c sessions.Change) error {
		place := c.Place
		return j.appendSync(Record{T: RecordRolledBack, Place: &place, OldSHA256: sha256Hex(c.Old), NewSHA256: sha256Hex(c.New)})
	}
	committed := func(c sessions.Change) { rep.References += restored[unitID(c.Place)] }
	if err := runRewriters(ctx, srcs, rep, edit, sessions.RewriteOptions{Prepare: prepare, Committed: committed}); err != nil {
		return rep, err
	}
	for _, id := range st.Order {
		if !seen[id] {
			rec := st.Units[id][0]
			rep.note(&rep.Problems, &rep.ProblemList, UnitNote{*rec.Place, "rewritten by the migration, but no session source given holds it now: give the same session sources, with the same exclusions, as the migration"})
		}
	}
	return rep, nil
}

// CheckReport is what a fresh read of the sessions says about the migrated blobs.
type CheckReport struct {
	// StillLocal counts references that still point at a migrated blob in the
	// source store; List holds the first of them.
	StillLocal int64        `json:"still_local"`
	List       []scan.Found `json:"still_local_list"`
	// Referenced holds the source keys those references name.
	Referenced map[string]bool `json:"-"`
	// Complete is false when a source could not be read in full: nothing may
	// then be concluded about which blobs are unreferenced.
	Complete bool     `json:"complete"`
	Problems []string `json:"problems"`

	// ReadBack counts the distinct references to copies (text below a copy
	// prefix) that were read back as the runtime reads them (RunOptions.
	// ReadBack) and led to their proven copies; ReadBackOther those that led
	// to a verified object this migration did not copy. ReadBackFull says
	// the bytes were read and hashed, not only stat'ed. ReadBackLeftAlone
	// counts those of ReadBackOther whose copies an earlier run with the
	// same journal proved and whose sources this run listed and left for a
	// later run (modified within --min-age, or a temporary-looking name
	// modified within the hour): their sources are still in the store.
	ReadBack          int64 `json:"read_back"`
	ReadBackOther     int64 `json:"read_back_other"`
	ReadBackLeftAlone int64 `json:"read_back_left_alone"`
	ReadBackFull      bool  `json:"read_back_full"`
	// Unresolved counts those that did not: listed with their first place in
	// UnresolvedList, and their sources kept (Referenced). UnresolvedUnknown
	// counts the ones that stand for no proven source: no source may be
	// deleted then, as which one they were meant for is unknown.
	Unresolved        int64        `json:"unresolved"`
	UnresolvedUnknown int64        `json:"unresolved_unknown"`
	UnresolvedList    []Unresolved `json:"unresolved_list"`
	maxListed         int
}

// checkStillLocal reads the sessions again and finds the references that still point at
// migrated blobs (migrated reports whether a key of from was migrated),
// resolving them as res does: the resolver the rewrite used, so that a
// reference spelled through any alias it knows is counted, not only paths in
// the store's own folder.
func checkStillLocal(ctx context.Context, srcs []sessions.Source, from store.Store, res *ref.Resolver, migrated func(key string) bool, maxListed int) (*CheckReport, error) {
	return check(ctx, srcs, from, res, migrated, maxListed, nil)
}

func check(ctx context.Context, srcs []sessions.Source, from store.Store, res *ref.Resolver, migrated func(key string) bool, maxListed int, rb *readBack) (*CheckReport, error) {
	cr, onRef := newCheck(migrated, maxListed, rb)
	rep, err := scan.Run(ctx, scan.Options{
		Sources:     srcs,
		Stores:      []scan.Target{{Store: from, Resolver: res}},
		OnReference: onRef,
	})
	if err != nil {
		return nil, err
	}
	cr.finish(rep)
	rb.check(ctx, cr)
	return cr, nil
}

// newCheck returns an empty report and the function that adds a reference
// found by a scan to it (and hands it to rb, when not nil).
func newCheck(migrated func(key string) bool, maxListed int, rb *readBack) (*CheckReport, func(scan.Found)) {
	if maxListed <= 0 {
		maxListed = defaultMaxListed
	}
	cr := &CheckReport{Referenced: map[string]bool{}, List: []scan.Found{}, Problems: []string{}, UnresolvedList: []Unresolved{}, maxListed: maxListed}
	return cr, func(f scan.Found) {
		if rb != nil {
			rb.see(f)
		}
		if f.Status != ref.Inside || !migrated(f.Key) {
			return
		}
		cr.StillLocal++
		cr.Referenced[f.Key] = true
		if len(cr.List) < maxListed {
			cr.List = append(cr.List, f)
		}
	}
}

// finish completes the report with the scan's own.
func (cr *CheckReport) finish(rep *scan.Report) {
	cr.Complete = rep.Complete && !rep.Interrupted
	for _, p := range rep.Problems {
		cr.Problems = append(cr.Problems, p.Place.String()+": "+p.Err)
	}
	slices.SortFunc(cr.List, func(a, b scan.Found) int { return strings.Compare(a.Place.String(), b.Place.String()) })
}
