package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// writeGCMetrics writes the Prometheus text format for node_exporter's
// textfile collector. The last success time survives failed runs: it is
// carried over from the previous file, and only a run that exited 0 moves it.
func writeGCMetrics(path string, stores []*gcStoreJSON, code int, took time.Duration) error {
	var scanned, bytesScanned, referenced, deleted, trashed, bytesRemoved, errs int64
	for _, r := range stores {
		if p := r.Plan; p != nil {
			scanned += p.Blobs
			bytesScanned += p.Bytes
			referenced += p.Referenced
		}
		if res := r.Result; res != nil {
			deleted += res.Deleted
			trashed += res.Trashed
			bytesRemoved += res.Bytes
			errs += int64(len(res.Failed))
		}
		if r.ExitCode != exitOK {
			errs++
		}
	}
	last := previousMetric(path, "mediactl_gc_last_success_timestamp_seconds")
	if code == exitOK {
		last = strconv.FormatInt(time.Now().Unix(), 10)
	}
	var b strings.Builder
	metric := func(name, help string, v any) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %v\n", name, help, name, name, v)
	}
	metric("mediactl_gc_blobs_scanned", "Blobs in the store when the last run planned.", scanned)
	metric("mediactl_gc_bytes_scanned", "Bytes of those blobs.", bytesScanned)
	metric("mediactl_gc_blobs_referenced", "Blobs that sessions refer to.", referenced)
	metric("mediactl_gc_blobs_deleted", "Blobs deleted permanently by the last run.", deleted)
	metric("mediactl_gc_blobs_trashed", "Blobs moved to the trash by the last run.", trashed)
	metric("mediactl_gc_bytes_removed", "Bytes deleted or trashed by the last run.", bytesRemoved)
	metric("mediactl_gc_errors", "Problems in the last run (refusals, unreadable sessions, failed removals).", errs)
	metric("mediactl_gc_exit_code", "Exit code of the last run.", code)
	metric("mediactl_gc_duration_seconds", "Duration of the last run.", took.Seconds())
	if last != "" {
		metric("mediactl_gc_last_success_timestamp_seconds", "Unix time of the last run that exited 0.", last)
	}
	return writeFileAtomic(path, []byte(b.String()))
}

func previousMetric(path, name string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a partial file.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeFileAtomicFunc is writeFileAtomic with the content written by write.
func writeFileAtomicFunc(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	// Unbuffered: its writers hand over few, large writes (gc.WriteJSON buffers
	// its own), and a second buffer would only copy them again.
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
