package trash

// How a run's folder is named, and read back: its start time, the process,
// the no-trash sweep, the shard and the split.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// RunID names a run's trash folder: its UTC start time, sortable, and the
// process id so that two runs in one second differ.
func RunID(t time.Time) string {
	return fmt.Sprintf("%s-%d", t.UTC().Format(runStamp), os.Getpid())
}

// runStamp is the layout of a run's start time in its name.
const runStamp = "20060102T150405Z"

// unusedRun names the run started at now: RunID(now)+suffix, or, when a run
// of that name exists already (a run of another kind started in the same
// second, or of another process that got the same id, pid 1 in two
// containers), the name of the first later second that none holds (freeRun).
// A run's accounting counts what is in its folder, so it must not share one.
// A check that fails leaves the name as it is: the moves replace nothing
// either way.
func unusedRun(ctx context.Context, in store.Internal, now time.Time, suffix string) string {
	run, _ := freeRun(ctx, in, now, suffix)
	return run
}

// freeRun names a run of the store started at now: RunID(now)+suffix, or,
// when a run of the store of any kind holds that name already (runTaken),
// the first later second's that none holds. gc restore takes a name and
// restores the one run of that name it finds first (a mark run, then a
// deleted run, then a trash run), so a trash run, a mark run and a deleted
// run never share one, whatever starts in the same second. A check that
// fails returns its error with the name reached.
func freeRun(ctx context.Context, in store.Internal, now time.Time, suffix string) (string, error) {
	run := RunID(now) + suffix
	if in == nil {
		return run, nil
	}
	for range maxNameTries {
		taken, err := runTaken(ctx, in, run)
		if err != nil {
			return run, err
		}
		if !taken {
			return run, nil
		}
		now = now.Add(time.Second)
		run = RunID(now) + suffix
	}
	return run, fmt.Errorf("trash: runs hold every name from %s on for an hour of seconds", RunID(now.Add(-maxNameTries*time.Second))+suffix)
}

// maxNameTries bounds freeRun's search: an hour of names taken in a row is
// no clock, but a store that something else fills with run folders.
const maxNameTries = 3600

var errFound = errors.New("found")

// runTaken reports whether a run of the store of any kind is named run: a
// trash run (its folder holds files), a deleted run (its record holds files)
// or a mark run (its marks).
func runTaken(ctx context.Context, in store.Internal, run string) (bool, error) {
	for _, folder := range []string{Dir, DeletedDir} {
		err := in.ListInternal(ctx, folder+"/"+run+"/", func(store.Entry) error { return errFound })
		if errors.Is(err, errFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
	rc, err := in.OpenInternal(ctx, MarksDir+"/"+run+".jsonl")
	switch {
	case err == nil:
		rc.Close()
		return true, nil
	case errors.Is(err, store.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}

// runSuffix ends the name of a run of the locked store: its shard's suffix,
// and for a shard of a named split "-in-" and the split's name.
func runSuffix(l *storelock.Lock, split string) (string, error) {
	suffix := shardSuffix(l.Shard())
	if split != "" && l.Shard().Sharded() {
		if !shard.ValidSplit(split) {
			return "", fmt.Errorf("trash: %q cannot name a split", split)
		}
		suffix += splitInfix + split
	}
	return suffix, nil
}

// shardSuffix ends the run name of a shard's run ("-shard-3-of-16"), so that
// the runs of one split are told apart and listed with their shard.
func shardSuffix(s shard.Spec) string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("-shard-%d-of-%d", s.K, s.N)
}

// parseRun reads a run name back, and says whether it is one: exactly as
// Move names its runs, RunID, then "-no-trash" for a sweep without the trash,
// then the shard's suffix, then for a shard of a named split "-in-" and the
// split's name. A folder of any other name in the trash — one that merely
// starts with a time stamp, in a --trash-dir that holds other things too — is
// no run: it is not listed, restored or purged.
func parseRun(run string) (r runName, ok bool) {
	stamp, rest, _ := strings.Cut(run, "-")
	t, err := time.Parse(runStamp, stamp)
	if err != nil || t.Format(runStamp) != stamp {
		return runName{}, false
	}
	pid, _, _ := strings.Cut(rest, "-")
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 || strconv.Itoa(n) != pid {
		return runName{}, false
	}
	suffix := strings.TrimPrefix(strings.TrimPrefix(run, stamp+"-"+pid), noTrashSuffix)
	if suffix == "" {
		return runName{time: t}, true
	}
	suffix, split, named := strings.Cut(suffix, splitInfix)
	k, n, _ := strings.Cut(strings.TrimPrefix(suffix, "-shard-"), "-of-")
	sh, err := shard.Parse(k+"/"+n, nil)
	if err != nil || shardSuffix(sh) != suffix || named && !shard.ValidSplit(split) {
		return runName{}, false
	}
	return runName{time: t, shard: sh.String(), split: split}, true
}

// runName is what a run's name says.
type runName struct {
	time  time.Time
	shard string // "K/N", "" for the whole store
	split string // the split a shard's run belongs to, "" when not named
}

// splitInfix comes before the name of the split in a shard's run name.
const splitInfix = "-in-"
