// Command genblobs writes a flat store of content-addressed blobs
// (<sha256>.bin, mode 0600) of random sizes for benchmarks. Output is
// deterministic for a given seed.
//
//	go run ./bench/genblobs -dir /tmp/s -size 2GiB -min 512KiB -max 5MiB
//	go run ./bench/genblobs -dir /tmp/t -count 200000 -min 4KiB -max 4KiB
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/dustin/go-humanize"
)

func main() {
	dir := flag.String("dir", "", "store directory to create")
	size := flag.String("size", "", "total size to write (or use -count)")
	count := flag.Int("count", 0, "number of blobs to write (or use -size)")
	minSize := flag.String("min", "4KiB", "smallest blob")
	maxSize := flag.String("max", "4KiB", "largest blob")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *dir == "" || (*size == "") == (*count == 0) {
		fmt.Fprintln(os.Stderr, "genblobs: need -dir and one of -size, -count")
		os.Exit(2)
	}
	lo, err := humanize.ParseBytes(*minSize)
	check(err)
	hi, err := humanize.ParseBytes(*maxSize)
	check(err)
	var total uint64
	if *size != "" {
		total, err = humanize.ParseBytes(*size)
		check(err)
	}
	check(os.MkdirAll(*dir, 0o700))
	rng := rand.New(rand.NewChaCha8([32]byte{byte(*seed)}))
	buf := make([]byte, hi)
	var written uint64
	n := 0
	for (total > 0 && written < total) || (*count > 0 && n < *count) {
		sz := lo
		if hi > lo {
			sz += rng.Uint64N(hi - lo + 1)
		}
		b := buf[:sz]
		for i := 0; i+8 <= len(b); i += 8 {
			v := rng.Uint64()
			b[i], b[i+1], b[i+2], b[i+3], b[i+4], b[i+5], b[i+6], b[i+7] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		}
		d := sha256.Sum256(b)
		check(os.WriteFile(filepath.Join(*dir, hex.EncodeToString(d[:])+".bin"), b, 0o600))
		written += sz
		n++
	}
	fmt.Printf("wrote %d blobs, %s, in %s\n", n, humanize.IBytes(written), *dir)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "genblobs:", err)
		os.Exit(1)
	}
}
