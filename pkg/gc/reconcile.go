package gc

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// Why a blob came back from the trash (Restored.Reason).
const (
	// NamedDuringRun: a session saved while the run that trashed the blob
	// was under way names it (a runtime re-used the blob, which it found
	// present, after the run had read the sessions).
	NamedDuringRun = "named during the run"
	// NamedSince: a session saved after the run that trashed the blob
	// names it; it is put back before anything else is removed.
	NamedSince = "named since it was trashed"
)

// Restored is a blob put back from the trash because a session names it.
type Restored struct {
	Run    string `json:"run"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Reason string `json:"reason"`
}

// TrashCheck is what a check of the trash against the sessions did: every
// blob of every trash run that the retention rule says a session names is
// put back into the store.
type TrashCheck struct {
	Runs     int        `json:"runs"`  // trash runs checked
	Blobs    int64      `json:"blobs"` // trashed blobs checked
	Restored []Restored `json:"restored"`
	// Kept are named blobs whose key holds a blob in the store again (a
	// writer saved it anew): nothing is missing, and the trashed copy stays.
	Kept []trash.Skip `json:"kept_in_trash"`
	// Complete is false when a session could not be read: nothing may then
	// be removed on this check.
	Complete bool     `json:"complete"`
	Problems []string `json:"problems"`
}

// ErrTrashCheckIncomplete is the error of a removal refused because the check
// of the trash against the sessions could not read every session.
var ErrTrashCheckIncomplete = errors.New("the check of the trash against the sessions did not read every session, so nothing may be removed")

// Merge adds what another check of the same store did.
func (c *TrashCheck) Merge(o *TrashCheck) {
	c.Runs = max(c.Runs, o.Runs)
	c.Blobs = max(c.Blobs, o.Blobs)
	c.Restored = append(c.Restored, o.Restored...)
	c.Kept = append(c.Kept, o.Kept...)
	c.Complete = c.Complete && o.Complete
	c.Problems = append(c.Problems, o.Problems...)
}

// trashIndex is a store's trash made ready for one read of the sessions:
// every trashed blob (of the shard) in an index per kind of run, so that the
// text of every session marks them as the retention rule marks the store's
// blobs. Runs whose blobs have proven copies (migrate's) are marked with the
// copies' names left out, as migrate decided them
// (retain.MarkOptions.CopiedTo). A trashed blob costs its key in the index (a
// content-addressed one its digest) and 12 bytes: a trash may hold millions.
type trashIndex struct {
	runs   []string // the runs checked
	groups []*trashGroup
	// companion is the store's companion rule: a sidecar comes back with
	// its upload, and an upload with its sidecar.
	companion func(key string) (owner string, ok bool)
}

type trashGroup struct {
	idx     *retain.Index
	run     []uint32 // by id in idx: the blob's run, an index into trashIndex.runs
	size    []int64  // by id
	mark    func([]byte)
	keys    map[string]bool // the keys, for copy names; only with copies
	longest int
}

// loadTrash lists the trash of st. It returns nil when the trash holds no
// blob of the shard: there is nothing to check.
func loadTrash(ctx context.Context, st store.Store, sh shard.Spec, companion func(string) (string, bool)) (*trashIndex, error) {
	t := &trashIndex{companion: companion}
	byCopies := map[string]*trashGroup{}
	copiedTo := map[*trashGroup][]string{}
	runID := map[string]uint32{}
	err := trash.EachTrashed(ctx, st, func(rec trash.RunRecord, b trash.Trashed) error {
		if rec.Expired {
			return nil // removed by age, referenced or not: the policy's choice
		}
		// With companions every shard checks the whole trash: in the trash
		// a sidecar's upload is not in the store, so the rule cannot say
		// whose shard it is, and a shard restoring what another's check
		// restores too is harmless (the second finds it gone).
		if companion == nil && !retain.InShard(sh, b.Key, nil) {
			return nil
		}
		id, ok := runID[b.Run]
		if !ok {
			id = uint32(len(t.runs))
			runID[b.Run] = id
			t.runs = append(t.runs, b.Run)
		}
		k := strings.Join(rec.CopiedTo, "\n")
		g := byCopies[k]
		if g == nil {
			g = &trashGroup{idx: retain.NewIndex()}
			byCopies[k] = g
			if slices.ContainsFunc(rec.CopiedTo, func(p string) bool { return p != "" }) {
				copiedTo[g] = rec.CopiedTo
				g.keys = map[string]bool{}
			}
			t.groups = append(t.groups, g)
		}
		g.idx.Add(b.Key)
		g.run = append(g.run, id)
		g.size = append(g.size, b.Size)
		if g.keys != nil {
			g.keys[b.Key] = true
			g.longest = max(g.longest, len(b.Key))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.groups) == 0 {
		return nil, nil
	}
	for _, g := range t.groups {
		g.mark = g.idx.Mark
		if prefixes := copiedTo[g]; len(prefixes) > 0 {
			keys := g.keys
			g.mark = retain.MarkOutsideCopies(g.idx.Mark, prefixes, g.longest, func(k string) bool { return keys[k] })
		}
	}
	return t, nil
}

// blobs is how many trashed blobs t holds.
func (t *trashIndex) blobs() int64 {
	var n int64
	for _, g := range t.groups {
		n += int64(g.idx.Len())
	}
	return n
}

// Mark marks every trashed blob that s names under the retention rule. It
// may be called from several goroutines at once, as the scan's Text is.
func (t *trashIndex) Mark(s []byte) {
	for _, g := range t.groups {
		g.mark(s)
	}
}

// restoreNamed puts back every marked blob (and its companions), reason
// NamedDuringRun for the blobs of run thisRun, NamedSince for the others.
func (t *trashIndex) restoreNamed(ctx context.Context, l *storelock.Lock, thisRun string) (*TrashCheck, error) {
	c := &TrashCheck{Runs: len(t.runs), Blobs: t.blobs(), Restored: []Restored{}, Kept: []trash.Skip{}, Complete: true, Problems: []string{}}
	type runKey struct {
		run uint32
		key string
	}
	named := map[runKey]bool{}
	for _, g := range t.groups {
		for id := range g.idx.Len() {
			if g.idx.Referenced(id) {
				named[runKey{g.run[id], g.idx.Key(id)}] = true
			}
		}
	}
	if t.companion != nil && len(named) > 0 {
		// A group (an upload "<id>.<ext>" and its sidecar "<id>.json") is
		// kept when any member is named, so it comes back whole, from the
		// same run. The store's rule cannot tell here (it looks for the
		// upload in the store, and both are in the trash): the group is
		// every blob of the run in the same folder with the same name up to
		// its first dot, which is the rule, and errs towards keeping.
		ownerOf := func(key string) string {
			dir, base := path.Split(key)
			if i := strings.IndexByte(base, '.'); i > 0 {
				base = base[:i]
			}
			return dir + base
		}
		namedGroup := map[runKey]bool{}
		for k := range named {
			namedGroup[runKey{k.run, ownerOf(k.key)}] = true
		}
		for _, g := range t.groups {
			for id := range g.idx.Len() {
				key := g.idx.Key(id)
				if namedGroup[runKey{g.run[id], ownerOf(key)}] {
					named[runKey{g.run[id], key}] = true
				}
			}
		}
	}
	if len(named) == 0 {
		return c, nil
	}
	byRun := map[uint32]map[string]int64{}
	for _, g := range t.groups {
		for id := range g.idx.Len() {
			k := runKey{g.run[id], g.idx.Key(id)}
			if !named[k] {
				continue
			}
			if byRun[k.run] == nil {
				byRun[k.run] = map[string]int64{}
			}
			byRun[k.run][k.key] = g.size[id]
		}
	}
	for ri, run := range t.runs {
		size := byRun[uint32(ri)]
		if len(size) == 0 {
			continue
		}
		keys := make([]string, 0, len(size))
		for k := range size {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		res, err := trash.RestoreKeys(ctx, l, run, keys)
		if res != nil {
			reason := NamedSince
			if run == thisRun {
				reason = NamedDuringRun
			}
			for _, k := range res.Kept {
				c.Kept = append(c.Kept, trash.Skip{Key: k.Key, Reason: "named by a session; " + k.Reason})
			}
			for _, k := range res.Keys {
				c.Restored = append(c.Restored, Restored{Run: run, Key: k, Size: size[k], Reason: reason})
			}
		}
		if err != nil {
			return c, fmt.Errorf("gc: put back from trash run %s the blobs sessions name: %w", run, err)
		}
	}
	return c, nil
}

// TrashCheckOptions configure CheckTrash.
type TrashCheckOptions struct {
	Sessions []sessions.Source
	Jobs     int
	// Companion is the store's companion rule (see Options.Companion).
	Companion func(key string) (owner string, ok bool)
	// Shard limits the check to the trashed blobs of one shard.
	Shard shard.Spec
	// Run is the run the caller has just made, if any: its blobs that come
	// back are reported as NamedDuringRun.
	Run string
	// ChangedSince, when set, reads only what may have changed since then
	// (sessions.ChangedSince): for a check right after a complete read of
	// the sessions that began after it. Zero reads everything.
	ChangedSince time.Time
}

// RereadMargin is how long before a complete read of the sessions the check
// after the moves starts looking for changes: a file system's clock (a
// network one's) may be behind this host's by up to this much.
const RereadMargin = 10 * time.Minute

// rereadMargin is RereadMargin, but for tests of sessions older than it.
var rereadMargin = RereadMargin

// CheckTrash reads every session and puts back, from every trash run of the
// locked store, each blob that a session names under the retention rule. It
// is the reconcile that makes removal safe beside a live runtime: gc runs it
// after its moves (a session saved during the run may name a blob it moved)
// and gc purge before it deletes anything. A check that could not read every
// session is incomplete (Complete false) and puts nothing back on its
// reading; the caller then removes nothing. With an empty trash it reads
// nothing.
func CheckTrash(ctx context.Context, l *storelock.Lock, opts TrashCheckOptions) (*TrashCheck, error) {
	if err := l.Held(); err != nil {
		return nil, err
	}
	if len(opts.Sessions) == 0 {
		return nil, errors.New("gc: checking the trash needs the sessions")
	}
	srcs := opts.Sessions
	if !opts.ChangedSince.IsZero() {
		srcs = changedSources(opts.Sessions, opts.ChangedSince)
	}
	// The trash is listed at the first string the read meets: when nothing
	// changed since (ChangedSince), a trash of millions costs nothing.
	var (
		load    sync.Once
		t       *trashIndex
		loadErr error
	)
	text := func(s []byte) {
		load.Do(func() { t, loadErr = loadTrash(ctx, l.Store(), opts.Shard, opts.Companion) })
		if t != nil {
			t.Mark(s)
		}
	}
	sr, err := scan.Run(ctx, scan.Options{Sources: srcs, Jobs: opts.Jobs, Text: text, CountOnly: true})
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	if loadErr != nil {
		return nil, fmt.Errorf("gc: %w", loadErr)
	}
	phase("reread")
	runs, blobs := 0, int64(0)
	if t != nil {
		runs, blobs = len(t.runs), t.blobs()
	}
	if problems := sr.Shortfall(); len(problems) > 0 || ctx.Err() != nil {
		if ctx.Err() != nil {
			problems = append(problems, "interrupted while reading the sessions")
		}
		return &TrashCheck{Runs: runs, Blobs: blobs, Restored: []Restored{}, Kept: []trash.Skip{}, Complete: false, Problems: problems}, nil
	}
	if t == nil {
		// Nothing read names anything (or the trash is empty).
		return &TrashCheck{Restored: []Restored{}, Kept: []trash.Skip{}, Complete: true, Problems: []string{}}, nil
	}
	return t.restoreNamed(ctx, l, opts.Run)
}

// PurgeOptions configure RunPurge.
type PurgeOptions struct {
	// Cutoff: runs that started before it are deleted.
	Cutoff time.Time
	// Sessions are read first: a blob of the trash that a session names is
	// put back, not deleted. Required unless Unchecked.
	Sessions  []sessions.Source
	Jobs      int
	Companion func(key string) (owner string, ok bool)
	// Unchecked deletes without reading the sessions: only for a store
	// whose runtimes are stopped and whose sessions name no trashed blob.
	Unchecked bool

	// recovery is what the bucket's service keeps of what the purge
	// deletes, as RunPurge asked it: where it keeps it, the purged blobs
	// are recorded as a deleted run (trash.Purge).
	recovery store.Recovery
}

// PurgeReport is what a purge did.
type PurgeReport struct {
	// Trash is the check against the sessions (nil when Unchecked).
	Trash  *TrashCheck        `json:"trash_check,omitempty"`
	Purged *trash.PurgeResult `json:"purged"`
}

// ErrPurgeNeedsSessions is RunPurge's error for options without sessions and
// without Unchecked.
var ErrPurgeNeedsSessions = errors.New("gc: a purge reads the sessions first, so that it never deletes a trashed blob a session names")

// purge deletes for good the trash runs of the locked store that started
// before Cutoff, after putting back every trashed blob a session names
// (CheckTrash): a purge is a delete too. A check that could not read every
// session deletes nothing (ErrTrashCheckIncomplete).
func purge(ctx context.Context, l *storelock.Lock, opts PurgeOptions) (*PurgeReport, error) {
	rep := &PurgeReport{Purged: &trash.PurgeResult{Runs: []string{}}}
	if !opts.Unchecked {
		if len(opts.Sessions) == 0 {
			return rep, ErrPurgeNeedsSessions
		}
		c, err := CheckTrash(ctx, l, TrashCheckOptions{Sessions: opts.Sessions, Jobs: opts.Jobs, Companion: opts.Companion})
		rep.Trash = c
		if err != nil {
			return rep, err
		}
		if !c.Complete {
			return rep, fmt.Errorf("%w: %s", ErrTrashCheckIncomplete, strings.Join(c.Problems, "; "))
		}
	}
	res, err := trash.Purge(ctx, l, opts.Cutoff, opts.recovery)
	if res != nil {
		rep.Purged = res
	}
	return rep, err
}

// TrashMarks is a store's trash made ready to be marked by a read of the
// sessions that the caller makes anyway (migrate's check before
// --delete-source, through retain.MarkOptions.Also), so that the trashed
// blobs a session names are put back before anything else is removed. The
// zero of a nil *TrashMarks marks nothing and restores nothing.
type TrashMarks struct{ t *trashIndex }

// LoadTrashMarks lists the trash of st (the blobs of shard sh).
func LoadTrashMarks(ctx context.Context, st store.Store, sh shard.Spec, companion func(string) (string, bool)) (*TrashMarks, error) {
	t, err := loadTrash(ctx, st, sh, companion)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	return &TrashMarks{t}, nil
}

// Mark marks the trashed blobs that s names; safe for concurrent use.
func (m *TrashMarks) Mark(s []byte) {
	if m != nil && m.t != nil {
		m.t.Mark(s)
	}
}

// RestoreNamed puts back the trashed blobs the sessions named. Call it only
// after a read of the sessions that was complete.
func (m *TrashMarks) RestoreNamed(ctx context.Context, l *storelock.Lock) (*TrashCheck, error) {
	if m == nil || m.t == nil {
		return &TrashCheck{Restored: []Restored{}, Kept: []trash.Skip{}, Complete: true, Problems: []string{}}, nil
	}
	return m.t.restoreNamed(ctx, l, "")
}

// changedSources is srcs narrowed to what may have changed since t
// (sessions.ChangedSince).
func changedSources(srcs []sessions.Source, t time.Time) []sessions.Source {
	out := make([]sessions.Source, len(srcs))
	for i, src := range srcs {
		out[i] = sessions.ChangedSince(src, t)
	}
	return out
}
