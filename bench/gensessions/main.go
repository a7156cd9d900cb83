// Command gensessions writes a forge-style work directory for benchmarks: session
// JSON files under .forge/sessions referencing content-addressed blobs under
// .forge/files/inbound. Output is deterministic for a given seed.
//
//	go run ./bench/gensessions -dir /tmp/b -size 1GiB -distinct 1000000 -blobs 1000
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

func main() {
	dir := flag.String("dir", "", "work directory to create")
	size := flag.String("size", "1GiB", "approximate total size of the session files")
	distinct := flag.Int("distinct", 100000, "distinct blobs referenced across all sessions")
	blobs := flag.Int("blobs", 0, "how many blobs to write into inbound/ (8-byte files; the first -distinct of them are referenced)")
	perFile := flag.String("file-size", "256KiB", "approximate size of one session file")
	proseLen := flag.Int("prose", 900, "average length of a user message's text, in bytes")
	blobAge := flag.Duration("blob-age", 0, "set the blobs' modification time this far in the past")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "gensessions: -dir is required")
		os.Exit(2)
	}
	total, err := humanize.ParseBytes(*size)
	check(err)
	fileSize, err := humanize.ParseBytes(*perFile)
	check(err)
	inbound := filepath.Join(*dir, ".forge", "files", "inbound")
	sessions := filepath.Join(*dir, ".forge", "sessions")
	check(os.MkdirAll(inbound, 0o700))
	check(os.MkdirAll(sessions, 0o700))

	name := func(i int) string {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		d := sha256.Sum256(b[:])
		return hex.EncodeToString(d[:]) + ".png"
	}
	mtime := time.Now().Add(-*blobAge)
	for i := 0; i < *blobs; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		p := filepath.Join(inbound, name(i))
		check(os.WriteFile(p, b[:], 0o600))
		if *blobAge > 0 {
			check(os.Chtimes(p, mtime, mtime))
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a cat sat on mat agent image please compare invoice total report summary tool call result error ok file path user assistant model token stream chunk photo document page figure table chart value")
	prose := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	var written uint64
	next := 0  // next blob index: every distinct blob is referenced at least once
	calls := 0 // tool calls, each naming the message's blob once more
	for f := 0; written < total; f++ {
		var msgs []any
		var est uint64
		for est < fileSize {
			i := next % *distinct
			next++
			uri := filepath.Join(inbound, name(i))
			text := prose(*proseLen*2/3 + rng.IntN(*proseLen*2/3+1))
			m := map[string]any{"role": "user", "content": text, "parts": []any{
				map[string]any{"type": "text", "text": text},
				map[string]any{"type": "image", "media": map[string]any{"mimeType": "image/png", "uri": uri}},
			}}
			msgs = append(msgs, m)
			reply := map[string]any{"role": "assistant", "content": prose(*proseLen / 3)}
			if rng.IntN(4) == 0 {
				args, _ := json.Marshal(map[string]any{"path": uri, "mode": "read"})
				reply["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", next), "type": "function",
					"function": map[string]any{"name": "read_file", "arguments": string(args)}}}
				calls++
			}
			msgs = append(msgs, reply)
			est += uint64(2*len(text) + len(uri) + 600)
		}
		doc := map[string]any{"task_id": fmt.Sprintf("t-%d", f), "messages": msgs,
			"created_at": "2026-07-01T10:00:00.123456Z", "updated_at": "2026-07-01T10:00:05.654321Z"}
		p := filepath.Join(sessions, fmt.Sprintf("t-%06d.json", f))
		out, err := os.Create(p)
		check(err)
		w := bufio.NewWriterSize(out, 1<<20)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ") // forge writes pretty-printed JSON
		check(enc.Encode(doc))
		check(w.Flush())
		fi, err := out.Stat()
		check(err)
		check(out.Close())
		written += uint64(fi.Size())
	}
	fmt.Printf("wrote %s of sessions referencing %d distinct blobs (%d references: %d in messages, %d in tool calls) in %s\n",
		humanize.IBytes(written), min(next, *distinct), next+calls, next, calls, *dir)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gensessions:", err)
		os.Exit(1)
	}
}
