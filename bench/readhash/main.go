// Command readhash is the least a program must do to hash every file of a
// folder one stream per core: one worker per CPU, each opening a file, reading
// it with read(2) into a 256 KiB buffer and hashing it with crypto/sha256 — no
// listing order, no checks, no report. bench/verify.sh times it beside mediactl
// verify: unlike bench/sha256rate, it pays the kernel's copy of every byte out
// of the page cache.
//
//	go run ./bench/readhash DIR
package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readhash DIR")
		os.Exit(2)
	}
	paths := make(chan string, 1024)
	var total atomic.Int64
	var failed atomic.Int64 // files not read whole, each reported as it fails
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			h := sha256.New()
			for p := range paths {
				f, err := os.Open(p)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Add(1)
					continue
				}
				h.Reset()
				n, err := io.CopyBuffer(h, onlyReader{f}, buf)
				f.Close()
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Add(1)
				}
				h.Sum(nil)
				total.Add(n)
			}
		})
	}
	err := filepath.WalkDir(os.Args[1], func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths <- p
		}
		return nil
	})
	close(paths)
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, "readhash:", err)
	}
	if n := failed.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "readhash: %d of the files could not be read (errors above)\n", n)
	}
	if err != nil || failed.Load() > 0 {
		os.Exit(1)
	}
	fmt.Println(total.Load())
}

// onlyReader hides *os.File's WriterTo, so that io.CopyBuffer uses the buffer.
type onlyReader struct{ io.Reader }
