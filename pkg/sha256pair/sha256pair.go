// Package sha256pair computes SHA-256 digests of two independent streams at
// once, for programs that hash many files and can interleave them.
//
// A single SHA-256 stream cannot use all of a modern core: each pair of rounds
// waits for the one before it, and the SHA-NI unit sits idle in between. Fed two
// streams in step, the core overlaps them: on a 2-CPU AMD EPYC (Zen 4) one
// core hashed 1.78 GB/s as one stream (crypto/sha256) and 3.1–3.5 GB/s as two
// (go test -bench . in this package). The digests are plain SHA-256,
// identical to crypto/sha256's; only the speed differs.
//
// Use [WritePair] while both streams have data and [Digest.Write] for the rest:
//
//	a, b := sha256pair.New(), sha256pair.New()
//	sha256pair.WritePair(a, chunkA, b, chunkB) // whole 64-byte blocks of both are hashed together
//	a.Write(tailA)
//	fmt.Printf("%x %x\n", a.Sum(nil), b.Sum(nil))
//
// Where the CPU lacks SHA-NI (or on other architectures) both calls fall back to
// a portable implementation; callers are expected to choose crypto/sha256 there,
// and [Accelerated] tells them.
package sha256pair

import (
	"encoding/binary"
	"hash"
)

// Size is the size of a SHA-256 digest in bytes; BlockSize its block size.
const (
	Size      = 32
	BlockSize = 64
)

var initial = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// Digest is the state of one SHA-256 stream. It implements hash.Hash.
type Digest struct {
	h   [8]uint32
	buf [BlockSize]byte
	nb  int    // bytes in buf
	len uint64 // bytes written
}

var _ hash.Hash = (*Digest)(nil)

// New returns a Digest ready for writing.
func New() *Digest {
	d := new(Digest)
	d.Reset()
	return d
}

// Reset returns d to its initial state.
func (d *Digest) Reset() {
	d.h = initial
	d.nb = 0
	d.len = 0
}

// Size returns 32.
func (d *Digest) Size() int { return Size }

// BlockSize returns 64.
func (d *Digest) BlockSize() int { return BlockSize }

// Write adds p to the stream. It never fails.
func (d *Digest) Write(p []byte) (int, error) {
	n := len(p)
	d.len += uint64(n)
	d.write(d.fill(p))
	return n, nil
}

// write hashes the whole blocks of p and buffers the rest; the buffer must be
// empty or p empty.
func (d *Digest) write(p []byte) {
	if whole := len(p) &^ (BlockSize - 1); whole > 0 {
		blocks(&d.h, p[:whole])
		p = p[whole:]
	}
	if len(p) > 0 {
		d.nb = copy(d.buf[:], p)
	}
}

// fill tops up a partly filled buffer from p, hashes it once full, and returns
// what is left of p; the buffer is then empty unless p ran out first.
func (d *Digest) fill(p []byte) []byte {
	if d.nb == 0 {
		return p
	}
	k := copy(d.buf[d.nb:], p)
	d.nb += k
	if d.nb == BlockSize {
		blocks(&d.h, d.buf[:])
		d.nb = 0
	}
	return p[k:]
}

// WritePair adds pa to stream a and pb to stream b (a and b must be distinct).
// The whole blocks the two have in common are hashed together; the rest, as by
// Write.
func WritePair(a *Digest, pa []byte, b *Digest, pb []byte) {
	a.len += uint64(len(pa))
	b.len += uint64(len(pb))
	pa, pb = a.fill(pa), b.fill(pb)
	if a.nb == 0 && b.nb == 0 {
		if whole := min(len(pa), len(pb)) &^ (BlockSize - 1); whole > 0 {
			blocksPair(&a.h, &b.h, pa[:whole], pb[:whole])
			pa, pb = pa[whole:], pb[whole:]
		}
	}
	a.write(a.fill(pa))
	b.write(b.fill(pb))
}

// Sum appends the digest of what was written to b; d is unchanged.
func (d *Digest) Sum(b []byte) []byte {
	c := *d
	var pad [2 * BlockSize]byte
	pad[0] = 0x80
	n := BlockSize - (c.nb+8)%BlockSize // 1..64 bytes of 0x80 and zeros, then the bit length
	binary.BigEndian.PutUint64(pad[n:], c.len<<3)
	c.Write(pad[:n+8]) // ends on a block boundary: c.h is the digest
	for _, v := range c.h {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// Sum256 returns the digest of d's stream in an array.
func (d *Digest) Sum256() (s [Size]byte) {
	d.Sum(s[:0])
	return s
}

// blocks hashes whole blocks of one stream.
func blocks(h *[8]uint32, p []byte) {
	if accelerated && len(p) > 0 {
		blocks1(h, &p[0], len(p)/BlockSize)
		return
	}
	blocksGeneric(h, p)
}

// blocksPair hashes len(pa) == len(pb) bytes of whole blocks of two streams.
func blocksPair(ha, hb *[8]uint32, pa, pb []byte) {
	if accelerated && len(pa) > 0 {
		blocks2(ha, hb, &pa[0], &pb[0], len(pa)/BlockSize)
		return
	}
	blocksGeneric(ha, pa)
	blocksGeneric(hb, pb)
}

// Accelerated reports whether this CPU hashes with the SHA-NI instructions,
// and so whether pairing streams is faster than crypto/sha256.
func Accelerated() bool { return accelerated }
