package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/trash"
)

// RollbackOptions configure Rollback.
type RollbackOptions struct {
	// JournalPath is the migration's journal.
	JournalPath string
	// Rewriters are the session sources the migration rewrote, opened with
	// its exclusions (sessions.Options.Exclude).
	Rewriters []sessions.Rewriter
	MaxListed int
	// Command is recorded in the store lock.
	Command string
	// Open opens the source and the destination by their locations, as the
	// journal records them; nil means store.Open.
	Open func(ctx context.Context, location string) (store.Store, error)
}

// RollbackReport is what Rollback did.
type RollbackReport struct {
	Journal string `json:"journal"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Sessions is the rollback of the rewritten session units (nil when the
	// migration rewrote none, or when it was refused).
	Sessions *RewriteReport `json:"rollback,omitempty"`
	// Restored are the trash runs of --delete-source put back.
	Restored []*trash.RestoreResult `json:"restored"`
	// FromCopies are sources that were gone (their trash run purged) and
	// were made again from their proven copies, digest checked.
	FromCopies []string `json:"restored_from_copies"`
	// Missing are sources that the rolled-back sessions would point at and
	// that could not be brought back: the sessions were then left as they are.
	Missing []Problem              `json:"missing_sources"`
	Notes   []string               `json:"notes"`
	Outcome outcome.Outcome        `json:"-"` // the document's envelope carries it
	Locked  *storelock.LockedError `json:"-"`
}

// NeedSessionsError is Rollback's error when the journal lists rewritten
// session units and no session source was given.
type NeedSessionsError struct{ Units int }

func (e *NeedSessionsError) Error() string {
	return fmt.Sprintf("the journal lists %d rewritten session units, and no session source was given", e.Units)
}

// Rollback undoes a migration as its journal records it, on the locked
// source store: it puts the trash runs of --delete-source back, makes again
// from the proven copies the sources that are gone for good (their trash run
// was purged) and that a rewritten session names, and only then restores each
// rewritten session unit (see RollbackSessions). When a source a session would
// point back at cannot be brought back, no session is changed and the outcome
// is refused: pointing a session at a file that is not there would break it.
// The copies in the destination are left in place.
func Rollback(ctx context.Context, opts RollbackOptions) (*RollbackReport, error) {
	if opts.Open == nil {
		opts.Open = store.Open
	}
	if opts.Command == "" {
		opts.Command = "migrate rollback"
	}
	if fi, err := os.Stat(opts.JournalPath); err != nil {
		return nil, fmt.Errorf("migrate: journal: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("migrate: journal %s is not a file", opts.JournalPath)
	}
	j, err := openJournal(opts.JournalPath)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	js := j.State()
	rep := &RollbackReport{Journal: opts.JournalPath, From: js.From, To: js.To, Restored: []*trash.RestoreResult{}, FromCopies: []string{}, Missing: []Problem{}, Notes: []string{}}
	if len(js.Units) > 0 && len(opts.Rewriters) == 0 {
		return nil, &NeedSessionsError{Units: len(js.Units)}
	}
	if len(js.Units) == 0 && len(js.Trash) == 0 {
		return rep, nil
	}
	src, err := opts.Open(ctx, js.From)
	if err != nil {
		return nil, fmt.Errorf("migrate: the migrated store %s: %w", js.From, err)
	}
	defer src.Close()
	lock, err := storelock.Acquire(ctx, src, opts.Command)
	if storelock.Refused(err, &rep.Locked, &rep.Outcome) {
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := lock.Release(ctx); err != nil {
			rep.Notes = append(rep.Notes, err.Error())
			rep.Outcome.Worsen(outcome.Incomplete)
		}
	}()

	for _, tr := range js.Trash {
		tl := lock
		if tr.TrashDir != "" {
			// The folder the migration claimed; a rollback claims none.
			tl, err = trash.OpenOwnDir(lock, tr.TrashDir)
			if errors.Is(err, fs.ErrNotExist) {
				// Gone with its runs: as for a purged run, the sources are
				// made again from their copies below.
				rep.Notes = append(rep.Notes, fmt.Sprintf("trash run %s is gone (%v)", tr.Run, err))
				continue
			}
			if err != nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("trash run %s: %v", tr.Run, err))
				rep.Outcome.Worsen(outcome.Incomplete)
				continue
			}
		}
		res, err := trash.Restore(ctx, tl, tr.Run)
		var noRun *trash.NoRunError
		switch {
		case errors.As(err, &noRun):
			// Purged: the sources it held are made again from their copies
			// below, where a session needs them.
			rep.Notes = append(rep.Notes, fmt.Sprintf("trash run %s is gone (purged)", tr.Run))
			continue
		case err != nil:
			if res != nil {
				rep.Restored = append(rep.Restored, res)
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("restore trash run %s: %v", tr.Run, err))
			rep.Outcome.Worsen(outcomeOf(ctx, err))
			continue
		}
		rep.Restored = append(rep.Restored, res)
		if len(res.Kept) > 0 {
			rep.Outcome.Worsen(outcome.Incomplete)
			continue
		}
		if err := j.Restored(tr.Run); err != nil {
			return rep, err
		}
	}
	if ctx.Err() != nil {
		rep.Outcome.Worsen(outcome.Interrupted)
		return rep, nil
	}
	if len(js.Units) == 0 {
		return rep, nil
	}

	if err := restoreFromCopies(ctx, lock, &opts, js, rep); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Interrupted: no session is changed before every source it
			// would point back at is there.
			rep.Outcome.Worsen(outcome.Interrupted)
			return rep, nil
		}
		return rep, err
	}
	if len(rep.Missing) > 0 {
		rep.Outcome.Worsen(outcome.Refused)
		return rep, nil
	}
	rr, err := rollbackSessions(ctx, opts.Rewriters, j, opts.MaxListed)
	rep.Sessions = rr
	if err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		rep.Outcome.Worsen(outcomeOf(ctx, err))
	}
	if rr != nil && rr.Problems > 0 {
		rep.Outcome.Worsen(outcome.Incomplete)
	}
	return rep, nil
}

// outcomeOf is interrupted for ctx's own error, else incomplete.
func outcomeOf(ctx context.Context, err error) outcome.Outcome {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return outcome.Interrupted
	}
	return outcome.Incomplete
}

// restoreFromCopies makes again, from its proven copy, each migrated source
// that is gone from the store and that a rewritten unit names: under the
// retention rule gc keeps blobs by (retain.Index: the name in every spelling a
// runtime writes, JSON and percent escapes decoded), in the text a rollback
// puts back or the text it takes out, or by the copy's digest. A copy whose
// bytes no longer hash to the proven digest is not written; the source is
// then Missing.
func restoreFromCopies(ctx context.Context, lock *storelock.Lock, opts *RollbackOptions, js *JournalState, rep *RollbackReport) error {
	src := lock.Store()
	keys := make([]string, 0, js.Copied.Len())
	for k := range js.Copied.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var gone []string
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := src.Stat(ctx, key)
		if err == nil {
			continue
		}
		if !errors.Is(err, store.ErrNotExist) {
			return fmt.Errorf("migrate: %s: %w", key, err)
		}
		gone = append(gone, key)
	}
	if len(gone) == 0 {
		return nil
	}
	// The edits' texts are the document's bytes, escapes and all: a coffer
	// name written by Python's json.dumps ("photo \u00e9.jpg"), a Go
	// encoder's "a\u0026b.png", a file:// URL's percent escapes.
	idx := retain.NewIndex()
	for _, key := range gone {
		idx.Add(key)
	}
	var texts strings.Builder
	for _, id := range js.Order {
		for _, rec := range js.Units[id] {
			for _, e := range rec.Edits {
				idx.Mark([]byte(e.Old))
				idx.Mark([]byte(e.New))
				texts.WriteString(e.New)
				texts.WriteByte(0)
			}
		}
	}
	all := texts.String()
	modes, err := sourceModes(opts.JournalPath, gone)
	if err != nil {
		return err
	}
	var dst store.Store
	defer func() {
		if dst != nil {
			dst.Close()
		}
	}()
	for i, key := range gone {
		p, _ := js.Copied.Get(key)
		if err := ctx.Err(); err != nil {
			return err
		}
		if !idx.Referenced(i) && !strings.Contains(all, p.Digest()) {
			continue // no session will point at it again
		}
		var err error
		if dst == nil {
			if dst, err = opts.Open(ctx, js.To); err != nil {
				dst = nil
				rep.Missing = append(rep.Missing, Problem{Key: key, Reason: fmt.Sprintf("gone from the store, and the destination %s cannot be opened: %v", js.To, err)})
				continue
			}
		}
		if err := copyBack(ctx, dst, src, key, p, modes[key]); err != nil {
			rep.Missing = append(rep.Missing, Problem{Key: key, Reason: "gone from the store, and its copy cannot be brought back: " + err.Error(), Expected: p.Digest()})
			continue
		}
		rep.FromCopies = append(rep.FromCopies, key)
	}
	return nil
}

// copyBack writes the copy of key in dst back to src under key, with the
// source's modification time and mode (0: the store's default), owned as its
// folder is, only if the bytes hash to the proven digest: the verifying
// reader fails the write otherwise, and nothing is published.
func copyBack(ctx context.Context, dst, src store.Store, key string, p Proof, mode fs.FileMode) error {
	rc, err := dst.Open(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	vr := &verifyingReader{r: rc, sha: sha256.New(), want: p.Digest()}
	return src.Put(ctx, key, vr, store.PutOptions{IfNotExist: true, ModTime: time.Unix(0, p.ModTime), Mode: mode, OwnerOfFolder: true})
}

// sourceModes reads the journal at path again for the permission bits its
// copied records give the sources keys (the last record of each wins): the
// journal's state keeps no modes, which only a rollback that makes sources
// again needs.
func sourceModes(path string, keys []string) (map[string]fs.FileMode, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	defer f.Close()
	modes := map[string]fs.FileMode{}
	_, err = scanJournal(f, func(rec Record) error {
		if rec.T == RecordCopied && want[rec.Key] {
			modes[rec.Key] = fs.FileMode(rec.Mode).Perm()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return modes, nil
}

// verifyingReader refuses to report EOF when the bytes read do not hash to
// want, so that a Put of them fails instead of publishing them.
type verifyingReader struct {
	r    io.Reader
	sha  hash.Hash
	want string
}

func (v *verifyingReader) Read(b []byte) (int, error) {
	n, err := v.r.Read(b)
	v.sha.Write(b[:n])
	if err == io.EOF {
		if got := hex.EncodeToString(v.sha.Sum(nil)); got != v.want {
			return n, fmt.Errorf("the copy's bytes hash to %s, not the proven %s", got, v.want)
		}
	}
	return n, err
}
