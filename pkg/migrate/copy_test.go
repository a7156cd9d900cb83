package migrate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/store/storetest"
)

var pngHead = []byte("\x89PNG\r\n\x1a\n")

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func digest(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}

// writeBlob writes content under its content-addressed name in dir.
func writeBlob(t testing.TB, dir string, content []byte, ext string) string {
	t.Helper()
	name := digest(content) + ext
	must(t, os.WriteFile(filepath.Join(dir, name), content, 0o600))
	return name
}

// openStore opens a local folder or a bucket URL, closed when the test ends.
func openStore(t testing.TB, location string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), location)
	must(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func journal(t testing.TB, path string) *migrate.Journal {
	t.Helper()
	j, err := migrate.OpenJournal(path)
	must(t, err)
	t.Cleanup(func() { j.Close() })
	return j
}

func copyAll(t testing.TB, opts migrate.Options) *migrate.Report {
	t.Helper()
	rep, err := migrate.Copy(context.Background(), opts)
	must(t, err)
	return rep
}

func readObject(t testing.TB, st store.Store, key string) []byte {
	t.Helper()
	rc, err := st.Open(context.Background(), key)
	must(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	must(t, err)
	return b
}

// TestCopy: every blob lands with its sha256 metadata and Content-Type; a
// corrupt blob is not uploaded; links and temporary files are left alone; a
// rerun uploads nothing; a fresh journal finds the copies in place.
func TestCopy(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	png := append(append([]byte{}, pngHead...), "a picture"...)
	pngName := writeBlob(t, dir, png, ".png")
	pdf := []byte("%PDF-1.7 a document")
	binName := writeBlob(t, dir, pdf, ".bin") // a PDF stored as .bin
	opaque := []byte("opaque bytes")
	must(t, os.WriteFile(filepath.Join(dir, "0b1e5c3a9d2f4e6b8a7c5d3e1f2a4b6c.jpg"), opaque, 0o600))
	corrupt := []byte("will be damaged")
	corruptName := writeBlob(t, dir, corrupt, ".png")
	must(t, os.WriteFile(filepath.Join(dir, corruptName), []byte("damaged bytes!!"), 0o600))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "link.png")))
	must(t, os.WriteFile(filepath.Join(dir, pngName+".tmp"), []byte("partial"), 0o600))

	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	jpath := filepath.Join(t.TempDir(), "j.jsonl")
	j := journal(t, jpath)
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j, Jobs: 3})
	if rep.Copied != 3 || rep.Corrupt != 1 || rep.Skipped != 2 || rep.Failed != 0 || rep.Conflicts != 0 {
		t.Fatalf("report %+v", rep)
	}
	if rep.CorruptList[0].Key != corruptName || rep.CorruptList[0].Actual != digest([]byte("damaged bytes!!")) {
		t.Fatalf("corrupt list %+v", rep.CorruptList)
	}
	if _, err := dst.Stat(context.Background(), corruptName); !isNotExist(err) {
		t.Fatalf("corrupt blob was uploaded: %v", err)
	}
	for key, want := range map[string]struct {
		body []byte
		ct   string
	}{
		pngName:                                {png, "image/png"},
		binName:                                {pdf, "application/pdf"},
		"0b1e5c3a9d2f4e6b8a7c5d3e1f2a4b6c.jpg": {opaque, "application/octet-stream"},
	} {
		attrs, err := dst.Stat(context.Background(), key)
		must(t, err)
		if attrs.Metadata[migrate.MetadataKey] != digest(want.body) || attrs.ContentType != want.ct {
			t.Errorf("%s: metadata %v, content type %q, want %s and %s", key, attrs.Metadata, attrs.ContentType, digest(want.body), want.ct)
		}
		if got := readObject(t, dst, key); !bytes.Equal(got, want.body) {
			t.Errorf("%s: object holds %q", key, got)
		}
	}

	// Rerun with the same journal: everything proven is skipped without I/O.
	must(t, j.Close())
	j2 := journal(t, jpath)
	if n := j2.State().Copied.Len(); n != 3 {
		t.Fatalf("journal lists %d proven copies, want 3", n)
	}
	rep = copyAll(t, migrate.Options{From: src, To: dst, Journal: j2})
	if rep.Resumed != 3 || rep.Copied != 0 || rep.BytesRead != int64(len("damaged bytes!!")) {
		t.Fatalf("rerun: %+v", rep)
	}

	// A fresh journal: the objects are found in place, not uploaded again.
	rep = copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "k.jsonl"))})
	if rep.Existing != 3 || rep.Copied != 0 {
		t.Fatalf("fresh journal: %+v", rep)
	}
}

func isNotExist(err error) bool { return errors.Is(err, store.ErrNotExist) }

// TestConflict: an object with other content under the same key is reported and
// kept, unless Overwrite.
func TestConflict(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	name := writeBlob(t, dir, []byte("ours"), ".png")
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	must(t, dst.Put(context.Background(), name, strings.NewReader("theirs"), store.PutOptions{}))

	dry := copyAll(t, migrate.Options{From: src, To: dst, DryRun: true})
	if dry.Conflicts != 1 || dry.Copied != 0 {
		t.Fatalf("dry run: %+v", dry)
	}
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j"))})
	if rep.Conflicts != 1 || rep.Copied != 0 || !strings.Contains(rep.ConflictList[0].Reason, "under this key") {
		t.Fatalf("report %+v", rep)
	}
	if got := readObject(t, dst, name); string(got) != "theirs" {
		t.Fatalf("conflicting object was overwritten: %q", got)
	}
	rep = copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j")), Overwrite: true})
	if rep.Copied != 1 || rep.Conflicts != 0 {
		t.Fatalf("overwrite: %+v", rep)
	}
	if got := readObject(t, dst, name); string(got) != "ours" {
		t.Fatalf("object holds %q after overwrite", got)
	}
}

// A journal's proof holds only while the copy and the source are as they
// were proven: a copy deleted from the destination since is uploaded again;
// the proof of a source changed since (an opaque name now holding other
// bytes, one now within the minimum age, one replaced by a link) or left
// alone by this run (within the minimum age, unchanged; its copy is not
// checked) is set aside for the rest of the run, so that the rewrite and the
// check after the copy only count copies this run saw.
func TestProofHoldsOnlyWhileTheCopyAndSourceDo(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	gone := writeBlob(t, dir, append(append([]byte{}, pngHead...), "deleted from the bucket"...), ".png")
	kept := writeBlob(t, dir, append(append([]byte{}, pngHead...), "still there"...), ".png")
	for _, name := range []string{"photo.jpg", "young.jpg", "linked.jpg", "fresh.jpg"} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte("the first "+name), 0o600))
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, name := range []string{gone, kept, "photo.jpg", "young.jpg", "linked.jpg"} {
		must(t, os.Chtimes(filepath.Join(dir, name), old, old))
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	jp := filepath.Join(t.TempDir(), "j.jsonl")
	first := journal(t, jp)
	if rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: first}); rep.Copied != 6 {
		t.Fatalf("first copy: %+v", rep)
	}
	must(t, first.Close())

	must(t, dst.Delete(ctx, gone))
	must(t, os.WriteFile(filepath.Join(dir, "photo.jpg"), []byte("other bytes under the same name"), 0o600))
	must(t, os.Chtimes(filepath.Join(dir, "photo.jpg"), old.Add(time.Hour), old.Add(time.Hour)))
	must(t, os.WriteFile(filepath.Join(dir, "young.jpg"), []byte("the second young.jpg"), 0o600))
	must(t, os.Remove(filepath.Join(dir, "linked.jpg")))
	must(t, os.Symlink(kept, filepath.Join(dir, "linked.jpg")))

	j := journal(t, jp)
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: j, Select: migrate.Selection{MinAge: time.Hour}})
	if rep.Resumed != 1 || rep.Copied != 1 || rep.Conflicts != 1 || rep.Skipped != 3 || rep.Failed != 0 {
		t.Fatalf("second copy: %d resumed, %d copied, %d conflicts, %d skipped, %d failed; want 1, 1, 1, 3, 0 (%+v)",
			rep.Resumed, rep.Copied, rep.Conflicts, rep.Skipped, rep.Failed, rep)
	}
	if _, err := dst.Stat(ctx, gone); err != nil {
		t.Errorf("%s, deleted from the destination, not copied again: %v", gone, err)
	}
	proven := j.State().Copied
	for _, key := range []string{gone, kept} {
		if _, ok := proven.Get(key); !ok {
			t.Errorf("%s: no proof after the run", key)
		}
	}
	for _, key := range []string{"photo.jpg", "young.jpg", "linked.jpg", "fresh.jpg"} {
		if p, ok := proven.Get(key); ok {
			t.Errorf("%s changed since its copy or left alone by this run, and its old proof is still trusted: %+v", key, p)
		}
	}
}

// TestDryRunChangesNothing: a dry run classifies and writes nothing.
func TestDryRunChangesNothing(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	for i := range 5 {
		writeBlob(t, dir, fmt.Appendf(nil, "blob %d", i), ".bin")
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	rep := copyAll(t, migrate.Options{From: src, To: dst, DryRun: true})
	if rep.Copied != 5 || rep.Selected != 5 {
		t.Fatalf("dry run: %+v", rep)
	}
	n := 0
	must(t, dst.List(context.Background(), "", func(store.Entry) error { n++; return nil }))
	if n != 0 {
		t.Fatalf("dry run wrote %d objects", n)
	}
}

// TestSelection: --include and --min-age narrow what is copied; a blob left
// out for its age is reported as skipped, one left out by --include is not.
func TestSelection(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	old := writeBlob(t, dir, []byte("old png"), ".png")
	young := writeBlob(t, dir, []byte("new png"), ".png")
	oldPDF := writeBlob(t, dir, []byte("old pdf"), ".pdf")
	then := time.Now().Add(-40 * 24 * time.Hour)
	must(t, os.Chtimes(filepath.Join(dir, old), then, then))
	must(t, os.Chtimes(filepath.Join(dir, oldPDF), then, then))
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	rep := copyAll(t, migrate.Options{From: src, To: dst, DryRun: true,
		Select: migrate.Selection{Include: []string{"*.png"}, MinAge: 30 * 24 * time.Hour}})
	if rep.Selected != 1 || rep.Copied != 1 {
		t.Fatalf("selection: %+v", rep)
	}
	if rep.Skipped != 1 || len(rep.SkippedList) != 1 || rep.SkippedList[0].Key != young || !strings.Contains(rep.SkippedList[0].Reason, "later run") {
		t.Fatalf("the young png is not reported as left for a later run: %+v", rep.SkippedList)
	}
	if _, err := migrate.Copy(context.Background(), migrate.Options{From: src, To: dst, DryRun: true, Select: migrate.Selection{Include: []string{"[x"}}}); err == nil {
		t.Fatal("a malformed pattern was accepted")
	}

	// The progress bar's total (an unordered listing of its own) is the
	// bytes Copy selects: by pattern, age and shard; a link is never counted.
	for i := range 12 {
		writeBlob(t, dir, bytes.Repeat([]byte{'b'}, 10+i), []string{".png", ".pdf"}[i%2])
	}
	must(t, os.Symlink(old, filepath.Join(dir, "link.png")))
	now := time.Now()
	for _, sel := range []migrate.Selection{
		{}, {Include: []string{"*.png"}}, {MinAge: 30 * 24 * time.Hour},
		{Shard: shard.Spec{K: 0, N: 3}}, {Shard: shard.Spec{K: 2, N: 3}, Include: []string{"*.pdf"}},
	} {
		opts := migrate.Options{From: src, To: dst, DryRun: true, Select: sel, Now: now}
		total, err := migrate.SelectedBytes(context.Background(), opts)
		must(t, err)
		if rep := copyAll(t, opts); total != rep.SelectedBytes || rep.Selected == 0 {
			t.Errorf("%+v: SelectedBytes = %d, Copy selected %d blobs, %d bytes", sel, total, rep.Selected, rep.SelectedBytes)
		}
	}
}

// TestThrottled: a server that answers 503 for a while still gets every blob,
// each proven.
func TestThrottled(t *testing.T) {
	sd, wrap := storetest.NewSlowDown(http.MethodPut, 3)
	srv := storetest.StartS3(t, wrap)
	dir := t.TempDir()
	for i := range 4 {
		writeBlob(t, dir, fmt.Appendf(nil, "blob %d", i), ".bin")
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j")), Jobs: 2})
	if rep.Copied != 4 || rep.Failed != 0 {
		t.Fatalf("report %+v", rep)
	}
	if sd.Refused() != 12 {
		t.Fatalf("the server refused %d uploads, want 12", sd.Refused())
	}
}

// TestBandwidthLimit: --bwlimit spreads the bytes over time.
func TestBandwidthLimit(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	for i := range 4 {
		writeBlob(t, dir, bytes.Repeat([]byte{byte(i)}, 256<<10), ".bin")
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	// 1 MiB at 512 KiB/s with a one-second burst needs at least one second more.
	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j")), BandwidthLimit: 512 << 10})
	if rep.Copied != 4 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Seconds < 0.9 {
		t.Fatalf("1 MiB at 512 KiB/s took %.2fs", rep.Seconds)
	}
}

// TestDeletable: a source whose copy vanished or was replaced since it was
// proven, or that a session still references, is never offered for deletion.
func TestDeletable(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	var names []string
	for i := range 4 {
		names = append(names, writeBlob(t, dir, fmt.Appendf(nil, "blob %d", i), ".bin"))
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	j := journal(t, filepath.Join(t.TempDir(), "j"))
	copyAll(t, migrate.Options{From: src, To: dst, Journal: j})
	must(t, dst.Delete(ctx, names[0]))
	must(t, dst.Put(ctx, names[1], strings.NewReader("replaced"), store.PutOptions{}))
	cands, kept, err := migrate.Deletable(ctx, j, dst, func(key string) bool { return key == names[2] }, 2)
	must(t, err)
	if len(cands) != 1 || cands[0].Key != names[3] || cands[0].Size != int64(len("blob 3")) {
		t.Fatalf("candidates %+v", cands)
	}
	if len(kept) != 2 || !strings.Contains(kept[0].Reason+kept[1].Reason, "gone") || !strings.Contains(kept[0].Reason+kept[1].Reason, "no longer the proven one") {
		t.Fatalf("kept %+v", kept)
	}
}

// TestMissingBucket: a destination that does not exist stops the run with one
// error naming it, before any blob is tried.
func TestMissingBucket(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	writeBlob(t, dir, []byte("x"), ".bin")
	src := openStore(t, dir)
	dst := openStore(t, "s3://no-such-bucket?"+srv.Query())
	_, err := migrate.Copy(context.Background(), migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j"))})
	if err == nil || !strings.Contains(err.Error(), "does not exist: create the bucket first") {
		t.Fatalf("err = %v", err)
	}
}

// changingStore serves other bytes for key from its second Open on, as if the
// blob were rewritten between two reads.
type changingStore struct {
	store.Store
	key   string
	opens atomic.Int32
}

func (s *changingStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if key == s.key && s.opens.Add(1) > 1 {
		return io.NopCloser(strings.NewReader("rewritten since")), nil
	}
	return s.Store.Open(ctx, key)
}

// TestOpaqueChangedDuringOverwrite: an opaque blob that changes between the
// hashing that judges the conflict and the upload that replaces it is a
// failure to retry, not a corrupt blob, and the object is left as it was.
func TestOpaqueChangedDuringOverwrite(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	const name = "0b1e5c3a9d2f4e6b8a7c5d3e1f2a4b6c.jpg"
	must(t, os.WriteFile(filepath.Join(dir, name), []byte("ours"), 0o600))
	src := &changingStore{Store: openStore(t, dir), key: name}
	dst := openStore(t, srv.Bucket(t, "media"))
	must(t, dst.Put(context.Background(), name, strings.NewReader("theirs"), store.PutOptions{}))

	rep := copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, filepath.Join(t.TempDir(), "j")), Overwrite: true})
	if rep.Failed != 1 || rep.Corrupt != 0 || rep.Copied != 0 || !strings.Contains(rep.FailedList[0].Reason, "changed while it was being copied") {
		t.Fatalf("report %+v", rep)
	}
	if n := src.opens.Load(); n != 2 {
		t.Fatalf("the source was opened %d times, want 2 (hashed once, then uploaded)", n)
	}
	if got := readObject(t, dst, name); string(got) != "theirs" {
		t.Fatalf("object holds %q", got)
	}
}

// TestInterruptedUploadsAreNotFailures: uploads an interrupt stops midway
// are counted as unfinished, never listed as failures, and a rerun copies
// them.
func TestInterruptedUploadsAreNotFailures(t *testing.T) {
	srv := storetest.StartS3(t, nil)
	dir := t.TempDir()
	for i := range 8 {
		writeBlob(t, dir, bytes.Repeat([]byte{byte(i)}, 256<<10), ".bin")
	}
	src := openStore(t, dir)
	dst := openStore(t, srv.Bucket(t, "media"))
	jpath := filepath.Join(t.TempDir(), "j")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel) // as a Ctrl-C would
	// 2 MiB at 256 KiB/s: every job is midway when the signal comes.
	first := journal(t, jpath)
	rep, err := migrate.Copy(ctx, migrate.Options{From: src, To: dst, Jobs: 4, Journal: first, BandwidthLimit: 256 << 10})
	must(t, err)
	must(t, first.Close())
	if !rep.Interrupted || rep.Failed != 0 || len(rep.FailedList) != 0 || rep.Unfinished == 0 {
		t.Fatalf("interrupted %v, failed %d %v, unfinished %d", rep.Interrupted, rep.Failed, rep.FailedList, rep.Unfinished)
	}
	again := copyAll(t, migrate.Options{From: src, To: dst, Journal: journal(t, jpath)})
	if again.Copied+again.Resumed+again.Existing != 8 || again.Failed != 0 {
		t.Fatalf("rerun: %+v", again)
	}
}
