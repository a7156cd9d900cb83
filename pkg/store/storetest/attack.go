package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// SwapFolders is the attacker of the race tests: it keeps replacing each
// folder of targets by a symbolic link to victim and putting it back (under a
// fresh aside name each time, so that a folder a move re-created meanwhile
// does not stop the attack), for at most d and max swaps per target, until
// the returned stop is called; then it removes its links and returns how
// many swaps it made. A target that does not exist yet is planted as a link.
// Targets must not lie below one another (the attacker would write through
// its own links).
func SwapFolders(t testing.TB, targets []string, victim string, d time.Duration, max int) (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	swaps := 0
	for _, p := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(d)
			n := 0
			for ; n < max && time.Now().Before(deadline); n++ {
				select {
				case <-done:
					deadline = time.Time{}
					continue
				default:
				}
				aside := fmt.Sprintf("%s.swap%d", p, n)
				moved := os.Rename(p, aside) == nil
				_ = os.Symlink(victim, p)
				for range 50 { // let the link live a moment
				}
				if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
					_ = os.Remove(p)
				}
				if moved {
					_ = os.Rename(aside, p)
				}
				time.Sleep(20 * time.Microsecond) // and the folder a moment too
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				_ = os.Remove(p)
			}
			mu.Lock()
			swaps += n
			mu.Unlock()
		}()
	}
	var once sync.Once
	stop = func() int {
		once.Do(func() { close(done); wg.Wait() })
		return swaps
	}
	t.Cleanup(func() { stop() })
	return stop
}

// Tree describes every entry below dir, links not followed: "dir", "link
// TARGET" or "file SHA256" by relative path, for comparing a victim folder
// before and after an attack.
func Tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %x", sha256.Sum256(b))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// FilesByContent maps the content of each regular file below dirs (links not
// followed; a folder that does not exist holds nothing) to where it is.
func FilesByContent(t testing.TB, dirs ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, dir := range dirs {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[string(b)] = append(out[string(b)], p)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
