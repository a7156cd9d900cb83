// Package forget erases one or more owners' media: every blob that only
// their session units name, from the store, from every trash run (the
// store's own, and those kept in a trash folder outside it), and the proven
// copies in the buckets migrate's journals copied to — also a copy that
// lives only there, once migrate --delete-source removed its source and
// the sessions name the copy; every blob and copy another unit also names
// stays.
//
// The protocol, per run, with every store locked from the start to the end:
//
//  1. List every store, and read every session once through the owner
//     attribution (package owner), collecting each unit's precise
//     references. An unread session stops the run: nothing is removed.
//  2. The forgotten units are those whose every reference (and the unit
//     itself, when a reference carries no owner of its own) belongs to a
//     forgotten owner. The candidates are the blobs (and their companions)
//     the forgotten owners' references name, in the store or in a trash run,
//     the proven copies they name in a bucket (by its URL, a name the
//     sessions call it, or the folder the rewrites mounted it at) with their
//     sources, and the proven copies of every candidate of a store. A blob
//     and its copies are kept together.
//  3. Read every session again, leaving out only the forgotten units: each
//     string marks the candidates under the full retention rule (package
//     retain: digest, hex part, stem words), and each precise reference
//     into a store marks what it names. A marked candidate, or a member of
//     its group, is kept. Another unread session stops the run.
//  4. With Delete, move the rest into a trash run of its own (command
//     "forget"): each blob is checked again right before it goes, and one
//     that changed, or was written at or after the run began (a runtime
//     freshened it), stays.
//  5. Read again what changed since the run began (the reconcile of gc's
//     live-writer protocol, less the forgotten units) and put back every
//     blob a unit saved meanwhile names; when that read is not complete,
//     everything moved goes back and nothing is deleted.
//  6. Only then delete the run for good, and the candidates in older trash
//     runs, and the copies: a copy cannot be put back, so none is deleted
//     before that read; each is checked right before its delete (the
//     proven size and sha256, and not written since the run began).
//
// Erasure is not retention: no minimum age applies; only the check of step
// 4 keeps a blob a writer touched during the run.
package forget

import (
	"errors"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/scan"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// Options configure Run.
type Options struct {
	// Stores are the blob stores, with the resolvers that map references
	// to their keys.
	Stores []scan.Target
	// Sources are every session source that may name the stores' blobs.
	Sources []sessions.Source
	// Companion is a store's companion rule (coffer's sidecars), or nil.
	Companion func(st store.Store) func(key string) (owner string, ok bool)
	// Rule attributes the session units (as report does).
	Rule owner.Rule
	// Owners are the ids of the owners to forget.
	Owners []string
	// Delete erases; without it Run says what it would erase and keep, and
	// still refuses a store another run holds locked.
	Delete bool
	// Journal, when set, is migrate's journal of a store: the proven copies
	// of the erased blobs in its destination are deleted too, and so are
	// the copies only the forgotten owners' units name (after migrate
	// --delete-source, the media only in the bucket). The stores' own
	// journals (.mediactl/migrate/*.jsonl) are read too.
	Journal string
	// TrashDirs are local folders outside the stores that hold trash runs
	// (gc and migrate's --trash-dir; each holds the trash of the store its
	// record names, and one store may have several): the candidates are
	// erased from their runs too, and this run's own trash run of a store
	// goes into the first of them that holds that store's trash. Each must
	// hold a store's trash already.
	TrashDirs []string
	// Resolver is the resolver of a bucket that migrate copied to, given
	// the names the sessions call it (target.Targets.Resolver); nil means
	// scan.NewResolver.
	Resolver func(st store.Store) *ref.Resolver
	// Bases are the folders relative references are relative to: a
	// reference to a copy through the folder the bucket is mounted at may
	// be relative.
	Bases []string
	// Jobs is passed to the session reads; 0 means one per CPU.
	Jobs int
	// MaxListed caps the problems listed; 0 means 10,000.
	MaxListed int
	// Now is the receipt's time; zero means time.Now().
	Now time.Time
}

// ErrNoOwner is Validate's error for options that name no owner.
var ErrNoOwner = errors.New("forget: no owner given")

// Validate checks the options before anything is opened or read.
func (o *Options) Validate() error {
	if len(o.Owners) == 0 {
		return ErrNoOwner
	}
	for _, id := range o.Owners {
		if strings.TrimSpace(id) == "" {
			return errors.New("forget: an empty owner id")
		}
	}
	if len(o.Stores) == 0 {
		return errors.New("forget: no store given")
	}
	if len(o.Sources) == 0 {
		return errors.New("forget: no session source given: forget reads every session, so that no blob another owner names is erased")
	}
	return nil
}

// Why a candidate stays (Kept.Reason). They never name the other owner.
const (
	// KeptNamedPrecisely: a unit of another owner (or one no owner could be
	// given) references it.
	KeptNamedPrecisely = "another owner's session also names it"
	// KeptNamedByRule: a unit of another owner names it under the retention
	// rule (its digest, hex part or the words of its name, in any text).
	KeptNamedByRule = "another session unit holds its name (retention rule)"
	// KeptCompanion: a member of its group (an upload and its sidecar) is
	// kept.
	KeptCompanion = "kept with a companion that stays"
	// KeptNamedDuringRun: a unit saved during the run names it; it was put
	// back.
	KeptNamedDuringRun = "named by a session saved during the run: put back"
	// KeptChanged: written again (or touched) since the run began.
	KeptChanged = "changed since the run began (a writer touched it)"
	// KeptWithCopy: a store's blob whose migrated copy another unit names.
	KeptWithCopy = "kept with its migrated copy, which stays"
	// KeptCopyNamedDuringRun: a copy a unit saved during the run names; it
	// was not deleted (the read after the moves comes before any delete of
	// a copy).
	KeptCopyNamedDuringRun = "named by a session saved during the run: not deleted"
	// KeptCopyChanged: a copy whose size or sha256 metadata is no longer
	// the journal's proof: other bytes, perhaps someone else's.
	KeptCopyChanged = "not the proven copy any more (its size or sha256 changed): left alone"
	// KeptCopyShared: a copy in a bucket that holds a record of a migration
	// whose journal the run did not read (another store's, whose sessions
	// may name the same object), or lacks the record of one it did read, or
	// whose records could not be read.
	KeptCopyShared = "the bucket may hold it for another store too (its migrations' records say so, or cannot say): left alone"
	// KeptCopyFound: a copy the migration found in the bucket already
	// (the same bytes under its key) and proved, rather than uploaded: the
	// object may be another store's, whose migration left no record.
	KeptCopyFound = "the migration found it in the bucket already, not uploaded: perhaps another store's: left alone"
)

// keptWithSource is why a copy stays whose source in the store stays: such
// a copy goes with its source and is not listed.
const keptWithSource = "kept with its source"

// Blob is one blob erased (or, in a dry run, to be erased).
type Blob struct {
	Store string `json:"store"`
	Key   string `json:"key"`
	// SHA256 is the digest of its content: its name's, for a
	// content-addressed name, else hashed before the removal ("" in a dry
	// run for an opaque name, or when it could not be read).
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Where it was removed from: "store", "trash run RUN", "copy URL".
	Where []string `json:"where"`
	// RemovedAt is when its last copy was deleted (nil in a dry run).
	RemovedAt *time.Time `json:"removed_at,omitempty"`
	// References are the forgotten owners' references to it, which dangle
	// once it is gone.
	References int64 `json:"references"`
	// Marked names the mark runs of a bucket that had marked it for a
	// deferred delete.
	Marked []string `json:"marked,omitempty"`
	// Bucket is set for a copy that lived only in the bucket migrate copied
	// the store's blob to (its source gone from the store and its trash):
	// that bucket. Where then names the copy alone.
	Bucket string `json:"bucket,omitempty"`

	at      ck
	inStore bool
	id      int // in the store's listing, when inStore
	runs    []runAt
	mod     time.Time
	copies  []string
}

// runAt is a trash run: its name, and the folder outside the store it is
// kept in (nil for the store's own trash).
type runAt struct {
	name string
	td   *trashDir
}

func (r runAt) String() string {
	if r.td == nil {
		return "trash run " + r.name
	}
	return "trash run " + r.name + " in " + r.td.dir
}

// Kept is a candidate that stays, and why.
type Kept struct {
	Store  string `json:"store"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Reason string `json:"reason"`
	// Bucket is set when what stays is the copy of the store's blob in
	// this bucket (migrate's), not a blob of the store.
	Bucket string `json:"bucket,omitempty"`
}

// Report is forget's receipt.
type Report struct {
	Owners []string `json:"owners"`
	// Unknown are the owners given that no session unit has: the run
	// removed nothing.
	Unknown []string  `json:"unknown"`
	DryRun  bool      `json:"dry_run"`
	Started time.Time `json:"started"`
	// Finished is when the run ended.
	Finished time.Time `json:"finished"`
	Stores   []string  `json:"stores"`
	// Buckets are the buckets migrate's journals copied the stores to,
	// whose copies were looked at.
	Buckets []string `json:"buckets,omitempty"`
	// TrashDirs are the folders outside the stores whose trash runs were
	// searched too; TrashDir is the first of them (the one field of the
	// schema's first readers).
	TrashDirs []string `json:"trash_dirs,omitempty"`
	TrashDir  string   `json:"trash_dir,omitempty"`
	// TrashNotSearched are the folders outside the stores that migrate's
	// journals say hold trash runs that are still there, which this run
	// did not search (it was not given them): the forgotten owners' blobs
	// in them are not erased, and the run is incomplete.
	TrashNotSearched []string `json:"trash_not_searched,omitempty"`
	// Units are the session units found to be only the forgotten owners'.
	Units int64 `json:"units"`
	// Erased are the blobs removed (a dry run: that would be).
	Erased []Blob `json:"erased"`
	Kept   []Kept `json:"kept"`
	// ErasedBytes adds up Erased.
	ErasedBytes int64 `json:"erased_bytes"`
	// Dangling counts the forgotten owners' references that now name no
	// blob: those to the erased blobs, and AlreadyDangling, those that named
	// none before the run.
	Dangling        int64 `json:"dangling_references"`
	AlreadyDangling int64 `json:"already_dangling_references"`
	// PutBack counts the blobs moved and put back because the read after
	// the moves could not be completed.
	PutBack int64 `json:"put_back,omitempty"`
	// Runs are the trash runs this run made (and deleted).
	Runs     []string `json:"runs,omitempty"`
	Problems []string `json:"problems"`
	// Refused says why the run was refused (a store's lock).
	Refused     string          `json:"refused,omitempty"`
	Complete    bool            `json:"complete"`
	Interrupted bool            `json:"interrupted,omitempty"`
	Outcome     outcome.Outcome `json:"-"` // the envelope says it
}
