// Command sha256rate prints this machine's single-stream crypto/sha256 rate in
// bytes per second: the ceiling per core that verify's throughput is judged
// against (it uses the SHA-NI instructions where the CPU has them).
package main

import (
	"crypto/sha256"
	"fmt"
	"time"
)

func main() {
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	sha256.Sum256(buf) // warm up
	best := 0.0
	for range 5 {
		start := time.Now()
		h := sha256.New()
		for range 8 {
			h.Write(buf)
		}
		h.Sum(nil)
		if r := float64(8*len(buf)) / time.Since(start).Seconds(); r > best {
			best = r
		}
	}
	fmt.Printf("%.0f\n", best)
}
