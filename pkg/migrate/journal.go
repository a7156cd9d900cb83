package migrate

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/mediactl/mediactl/pkg/blobname"
	"github.com/mediactl/mediactl/pkg/ref"
)

// The journal is a JSON Lines file, one record per step, appended and never
// rewritten. A run that is killed leaves at most a torn last line, which the
// next run ignores; everything before it is trusted.
//
// Record types ("t"):
//
//	start     a run began: source, destination, options
//	copied    a blob's copy is proven: key, size, mod time, sha256, object URL
//	rewrite   a session unit is about to be rewritten: place, the sha256 of the
//	          unit before and after, and each replacement with its offset
//	trashed   source blobs were moved to the gc trash run named
//	restored  rollback put that trash run back
//	rolledback a unit was restored by rollback
const journalVersion = 1

// RecordType is a journal record's kind (its "t").
type RecordType string

// The record types. Only this package writes records, through the Journal's
// methods; readers (rollback, tests) may read them all.
const (
	RecordStart      RecordType = "start"
	RecordCopied     RecordType = "copied"
	RecordRewrite    RecordType = "rewrite"
	RecordTrashed    RecordType = "trashed"
	RecordRestored   RecordType = "restored"
	RecordRolledBack RecordType = "rolledback"
)

// Record is one line of the journal.
type Record struct {
	T    RecordType `json:"t"`
	Time time.Time  `json:"time"`

	// start
	Version int    `json:"version,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	// ID names the migration (every run of it, in every start record; a
	// journal begun by a mediactl that kept none gets one at its next run):
	// the name of its record in the destination ([ClaimName]).
	ID string `json:"id,omitempty"`

	// copied
	Key     string    `json:"key,omitempty"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"mod_time,omitzero"`
	SHA256  string    `json:"sha256,omitempty"`
	URL     string    `json:"url,omitempty"`
	// Mode is a local source's permission bits (0 for a bucket's): what
	// rollback gives the source when it makes it again from the copy.
	Mode uint32 `json:"mode,omitempty"`
	// Found marks a copy the migration found in the destination already
	// (the same bytes under the key) and proved, rather than uploaded: it
	// may be another store's object too.
	Found bool `json:"found,omitempty"`

	// rewrite, rolledback
	Place     *ref.Place    `json:"place,omitempty"`
	OldSHA256 string        `json:"old_sha256,omitempty"`
	NewSHA256 string        `json:"new_sha256,omitempty"`
	Edits     []Replacement `json:"edits,omitempty"`

	// trashed
	Run      string `json:"run,omitempty"`
	Count    int64  `json:"count,omitempty"`
	TrashDir string `json:"trash_dir,omitempty"` // when the trash was kept outside the store
}

// Replacement is one reference rewritten inside a session unit: at byte offset
// At of the unit as it was, the bytes Old became New. Old and New are the bytes
// as stored (JSON-escaped inside a JSON string).
type Replacement struct {
	At  int64  `json:"at"`
	Old string `json:"old"`
	New string `json:"new"`
}

// Journal records what a migration did, so that a rerun resumes and rollback
// can undo the rewrites. It is safe for concurrent use.
type Journal struct {
	path string

	mu       sync.Mutex
	f        *os.File
	end      int64               // length of the records written whole
	broken   *JournalBrokenError // the write or sync that failed; nothing is appended after it
	unsynced int
	synced   time.Time

	state *JournalState
}

// JournalState is what a journal says so far.
type JournalState struct {
	Runs   int                  // start records
	From   string               // source of the first run
	To     string               // destination of the first run
	ID     string               // the migration's name, from the first start record that has one
	Copied *Proofs              // proven copies by source key
	Units  map[string][]*Record // rewrite records by unit (see unitID), oldest first
	Order  []string             // units in the order they were first rewritten
	Trash  []TrashRun           // gc trash runs holding deleted sources
}

// Proof is what the journal keeps in memory of a proven copy: enough to skip
// it on a rerun and to rewrite references to it.
type Proof struct {
	Size    int64
	ModTime int64 // Unix nanoseconds of the source when it was copied
	At      int64 // Unix seconds when the copy was proven
	SHA256  [32]byte
	// Found: the copy was in the destination already when the migration
	// reached it (Record.Found).
	Found bool
}

// Digest is the copy's sha256 in lower-case hex.
func (p Proof) Digest() string { return hex.EncodeToString(p.SHA256[:]) }

// Proven returns the proof of key's copy. It is safe to call while records
// are appended.
func (j *Journal) Proven(key string) (Proof, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state.Copied.Get(key)
}

// confirmIf records that this run checked key's proof against the source and
// the destination (holds says it still holds; nil when the run has just made
// it), and reports whether it did: see keepConfirmed.
func (j *Journal) confirmIf(key string, holds func(Proof) bool) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state.Copied.confirmIf(key, holds)
}

// leftAlone notes that this run listed key and left it for a later run
// (Proofs.LeftAlone).
func (j *Journal) leftAlone(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.state.Copied.markLeftAlone(key)
}

// keepConfirmed forgets, for the rest of this run and leaving the file as it
// is, every proof the run did not confirm: copies of blobs it did not list
// (outside --include, gone from the store), left alone (within --min-age),
// or found changed or missing. The rewrite, the check and --delete-source
// then act on what this run saw to be copied, never on an older run's word
// about a copy that may be gone since. A later run reads them again.
func (j *Journal) keepConfirmed() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.state.Copied.keepConfirmed()
}

// TrashRun is a gc trash run that holds sources --delete-source moved.
type TrashRun struct {
	Run      string
	TrashDir string // "" for the store's own trash
}

// Rate is the upload rate, in bytes per second, of the copies the journal
// records (0 when it cannot tell).
func (st *JournalState) Rate() float64 {
	var first, last, bytes int64
	for _, p := range st.Copied.All() {
		if first == 0 || p.At < first {
			first = p.At
		}
		last = max(last, p.At)
		bytes += p.Size
	}
	if last-first >= 1 {
		return float64(bytes) / float64(last-first)
	}
	return 0
}

// openJournal opens (creating if needed) the journal at path for this run
// alone and reads what it already holds. A torn last line — a run killed
// while appending — is ignored; any other malformed line is an error naming
// its line number. A journal another migrate or rollback has open is a
// *JournalInUseError, before anything is read or cut: that run may be
// appending, and cutting what looks like a torn last line would cut its
// record in half.
func openJournal(path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	// O_APPEND: whatever happens to the file's length, a record goes at
	// its end, never over or past another.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := lockJournal(f); err != nil {
		f.Close()
		if errors.Is(err, errJournalLocked) {
			return nil, &JournalInUseError{Path: path}
		}
		return nil, fmt.Errorf("journal %s: lock: %w", path, err)
	}
	st, good, err := readJournal(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	// Cut a torn tail so that the next record starts on a line of its own.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &Journal{path: path, f: f, end: good, state: st, synced: time.Now()}, nil
}

// JournalInUseError is Run's and Rollback's error for a journal that another
// migrate or rollback has open (an exclusive lock on the file, which ends
// with that process).
type JournalInUseError struct {
	Path string
}

func (e *JournalInUseError) Error() string {
	return fmt.Sprintf("journal %s is open in another migrate or rollback", e.Path)
}

// errJournalLocked is lockJournal's error for a file another process holds.
var errJournalLocked = errors.New("locked by another process")

// LoadJournal reads the journal at path without opening it for writing (a
// torn last line stays as it is): a dry run's view of what earlier runs
// proved. Appending to it fails.
func LoadJournal(path string) (*Journal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	defer f.Close()
	st, _, err := readJournal(f)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &Journal{path: path, state: st}, nil
}

// readJournal parses a journal. It returns the state and the length of the
// well-formed prefix (everything but a torn last line).
func readJournal(r io.Reader) (*JournalState, int64, error) {
	st := newJournalState()
	good, err := scanJournal(r, st.apply)
	if err != nil {
		return nil, good, err
	}
	return st, good, nil
}

// scanJournal calls fn with each record of a journal, in order, and returns
// the length of the well-formed prefix (everything but a torn last line). A
// malformed line, or an error of fn, stops it: the error names the line.
func scanJournal(r io.Reader, fn func(Record) error) (int64, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var good int64
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			// A record longer than the buffer (a rewrite with many edits).
			more := append([]byte(nil), b...)
			b, err = br.ReadSlice('\n')
			b = append(more, b...)
		}
		if err == io.EOF {
			if len(bytes.TrimSpace(b)) > 0 {
				// A last line without its newline is torn: each record goes
				// out with its newline in one write. Drop it unread.
				return good, nil
			}
			return good + int64(len(b)), nil
		}
		if err != nil {
			return good, err
		}
		good += int64(len(b))
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return good, fmt.Errorf("line %d is not a journal record (%v); the journal was edited or damaged: move it aside to start over", line, err)
		}
		if err := fn(rec); err != nil {
			return good, fmt.Errorf("line %d: %w", line, err)
		}
	}
}

// copiedProof is the proof a copied record gives.
func copiedProof(rec Record) (Proof, error) {
	if rec.Key == "" || rec.SHA256 == "" {
		return Proof{}, errors.New("copied record without key or sha256")
	}
	sum, ok := blobname.ParseDigest(rec.SHA256)
	if !ok {
		return Proof{}, fmt.Errorf("copied record with a malformed sha256 %q", rec.SHA256)
	}
	return Proof{Size: rec.Size, ModTime: rec.ModTime.UnixNano(), At: rec.Time.Unix(), SHA256: sum, Found: rec.Found}, nil
}

func newJournalState() *JournalState {
	return &JournalState{Copied: newProofs(), Units: map[string][]*Record{}}
}

func (st *JournalState) apply(rec Record) error {
	switch rec.T {
	case RecordStart:
		if rec.Version > journalVersion {
			return fmt.Errorf("written by a newer mediactl (journal version %d)", rec.Version)
		}
		if st.Runs == 0 {
			st.From, st.To = rec.From, rec.To
		}
		if st.ID == "" && validID(rec.ID) {
			st.ID = rec.ID
		}
		st.Runs++
	case RecordCopied:
		p, err := copiedProof(rec)
		if err != nil {
			return err
		}
		st.Copied.set(rec.Key, p)
	case RecordRolledBack:
		// Rollback decides by content, not by this record: a rollback that was
		// prepared but not committed is simply tried again.
		if rec.Place == nil {
			return errors.New("rolledback record without place")
		}
	case RecordRewrite:
		if rec.Place == nil {
			return fmt.Errorf("%s record without place", rec.T)
		}
		id := unitID(*rec.Place)
		if _, ok := st.Units[id]; !ok {
			st.Order = append(st.Order, id)
		}
		// Every record, not the last only: each run's edits are relative to
		// the unit as that run found it, so undoing runs 2 then 1 is the
		// only way back to what run 1 read.
		r := rec
		st.Units[id] = append(st.Units[id], &r)
	case RecordTrashed:
		// A run is journaled before its moves and again, with its count,
		// after them: one run either way.
		if !slices.ContainsFunc(st.Trash, func(r TrashRun) bool { return r.Run == rec.Run && r.TrashDir == rec.TrashDir }) {
			st.Trash = append(st.Trash, TrashRun{Run: rec.Run, TrashDir: rec.TrashDir})
		}
	case RecordRestored:
		// Rollback put a trash run back: a second rollback leaves it alone.
		st.Trash = slices.DeleteFunc(st.Trash, func(r TrashRun) bool { return r.Run == rec.Run })
	default:
		return fmt.Errorf("unknown record type %q", rec.T)
	}
	return nil
}

// unitID names a session unit independently of how its source was spelled:
// a document by its path, a value by table, row key and column.
func unitID(p ref.Place) string {
	if p.Table != "" {
		return "sql\x00" + p.Table + "\x00" + p.Key + "\x00" + p.Column
	}
	return "doc\x00" + p.Document
}

// Path is the journal's file name.
func (j *Journal) Path() string { return j.path }

// State is what the journal held when it was opened, updated by every append.
// Read it only while no records are being appended (the copy appends from
// many goroutines; use Proven then).
func (j *Journal) State() *JournalState { return j.state }

// append adds a record. It is written at once and synced every few seconds;
// Sync makes everything durable now.
func (j *Journal) append(rec Record) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("journal %s: opened for reading only", j.path)
	}
	if j.broken != nil {
		return j.broken
	}
	if err := j.state.apply(rec); err != nil {
		return err
	}
	// Hand each record to the kernel at once — a killed process then loses
	// nothing — and make them durable every few seconds, which is what a
	// power cut can cost: a rerun finds those copies in place and proves them again.
	b = append(b, '\n')
	if n, err := j.f.Write(b); err != nil {
		// A full disk takes part of a line. Nothing more is appended this
		// run, so that part stays a torn last line, which the next run
		// drops; the next record written onto it would make a line no run
		// can read, and the journal useless for rollback. Cut it off, too,
		// where the file system lets us.
		j.broken = &JournalBrokenError{Path: j.path, Err: err}
		if n > 0 {
			j.f.Truncate(j.end)
		}
		return j.broken
	}
	j.end += int64(len(b))
	j.unsynced++
	if time.Since(j.synced) > 2*time.Second {
		return j.syncLocked()
	}
	return nil
}

// JournalBrokenError is the error of every append after a write or a sync of
// the journal failed (a full disk, an I/O error): the run records nothing
// more, and does nothing a record must come before (a rewrite, a delete).
type JournalBrokenError struct {
	Path string
	Err  error
}

func (e *JournalBrokenError) Error() string {
	return fmt.Sprintf("journal %s: a write failed, nothing more is recorded this run: %v", e.Path, e.Err)
}
func (e *JournalBrokenError) Unwrap() error { return e.Err }

// Broken returns the error that stopped the journal's appends, or nil.
func (j *Journal) Broken() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken == nil {
		return nil // not a nil *JournalBrokenError in an error
	}
	return j.broken
}

// Sync makes the records appended so far durable (fsync).
func (j *Journal) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.syncLocked()
}

func (j *Journal) syncLocked() error {
	if j.f == nil {
		return nil
	}
	if j.unsynced == 0 {
		return nil
	}
	if err := j.f.Sync(); err != nil {
		// After a failed fsync the kernel may have dropped the pages it
		// could not write: what this run appended is no longer known to
		// be in the file.
		j.broken = &JournalBrokenError{Path: j.path, Err: err}
		return j.broken
	}
	j.unsynced = 0
	j.synced = time.Now()
	return nil
}

// appendSync adds a record and makes it durable before returning: for steps
// that must be journaled before they happen (a session rewrite).
func (j *Journal) appendSync(rec Record) error {
	if err := j.append(rec); err != nil {
		return err
	}
	return j.Sync()
}

// Started records that a run of the migration of from to to began, with
// the migration's ID (made here for a journal that has none yet).
func (j *Journal) Started(from, to string) error {
	j.mu.Lock()
	id := j.state.ID
	j.mu.Unlock()
	if id == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("journal %s: name the migration: %w", j.path, err)
		}
		id = hex.EncodeToString(b[:])
	}
	return j.appendSync(Record{T: RecordStart, Version: journalVersion, From: from, To: to, ID: id})
}

// validID reports whether id is a migration's ID as Started makes them: a
// journal is read from disk, and its ID names an object in a bucket.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Trashed records that count sources were moved into the trash run run
// (kept in trashDir, or in the store's own trash when trashDir is ""); with
// count 0, before the first move, that the run is about to take them.
func (j *Journal) Trashed(run string, count int64, trashDir string) error {
	return j.appendSync(Record{T: RecordTrashed, Run: run, Count: count, TrashDir: trashDir})
}

// Restored records that rollback put the trash run run back.
func (j *Journal) Restored(run string) error {
	return j.appendSync(Record{T: RecordRestored, Run: run})
}

// Close syncs and closes the journal.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.syncLocked()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}
