// Package forget erases one or more owners' media: every blob that only
// their session units name, from the store, from every trash run, and (given
// migrate's journal) the proven copies in the bucket; every blob another
// unit also names stays.
//
// The protocol, per run, with every store locked from the start to the end:
//
//  1. List every store, and read every session once through the owner
//     attribution (package owner), collecting each unit's precise
//     references. An unread session stops the run: nothing is removed.
//  2. The forgotten units are those whose every reference (and the unit
//     itself, when a reference carries no owner of its own) belongs to a
//     forgotten owner. The candidates are the blobs (and their companions)
//     the forgotten owners' references name, in the store or in a trash run.
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
//     runs, and the proven copies the journal names.
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
	// of the erased blobs in its destination are deleted too.
	Journal string
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
)

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

	inStore bool
	id      int // in the store's listing, when inStore
	runs    []string
	mod     time.Time
	copies  []string
}

// Kept is a candidate that stays, and why.
type Kept struct {
	Store  string `json:"store"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	Reason string `json:"reason"`
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
