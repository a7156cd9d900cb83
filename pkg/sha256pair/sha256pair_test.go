package sha256pair

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// stdSum is the reference: crypto/sha256.
func stdSum(p []byte) []byte { s := sha256.Sum256(p); return s[:] }

// TestKnownAnswers checks FIPS 180-4's examples and the block boundaries where
// padding takes one block or two.
func TestKnownAnswers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	} {
		d := New()
		d.Write([]byte(c.in))
		if got := hexString(d.Sum(nil)); got != c.want {
			t.Errorf("sha256(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	for n := 0; n <= 3*BlockSize; n++ {
		p := bytes.Repeat([]byte{'a'}, n)
		d := New()
		d.Write(p)
		if !bytes.Equal(d.Sum(nil), stdSum(p)) {
			t.Errorf("length %d: digest differs from crypto/sha256", n)
		}
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	s := make([]byte, 0, 2*len(b))
	for _, c := range b {
		s = append(s, digits[c>>4], digits[c&15])
	}
	return string(s)
}

// TestPairs hashes random streams of random lengths, fed in random chunks,
// together and alone in every mix, and compares each with crypto/sha256.
func TestPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for iter := range 3000 {
		na, nb := rng.IntN(40000), rng.IntN(40000)
		if iter%10 == 0 {
			nb = na // equal lengths: every block paired
		}
		wantA, wantB := data[rng.IntN(len(data)-na):][:na], data[rng.IntN(len(data)-nb):][:nb]
		pa, pb := wantA, wantB
		a, b := New(), New()
		for len(pa) > 0 || len(pb) > 0 {
			ca, cb := min(len(pa), chunk(rng)), min(len(pb), chunk(rng))
			switch rng.IntN(5) {
			case 0:
				a.Write(pa[:ca])
				pa = pa[ca:]
			case 1:
				b.Write(pb[:cb])
				pb = pb[cb:]
			default:
				WritePair(a, pa[:ca], b, pb[:cb])
				pa, pb = pa[ca:], pb[cb:]
			}
		}
		if !bytes.Equal(a.Sum(nil), stdSum(wantA)) || !bytes.Equal(b.Sum(nil), stdSum(wantB)) {
			t.Fatalf("iteration %d: digests of %d and %d bytes differ from crypto/sha256", iter, na, nb)
		}
		// Sum leaves the state alone: more data after it continues the stream.
		a.Write(wantB)
		if !bytes.Equal(a.Sum(nil), stdSum(append(append([]byte{}, wantA...), wantB...))) {
			t.Fatalf("iteration %d: Write after Sum does not continue the stream", iter)
		}
	}
}

// TestGeneric checks the portable block function, which CPUs without SHA-NI
// use, against crypto/sha256 (on this CPU the tests above may not reach it).
func TestGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := make([]byte, 64*BlockSize)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	for n := 0; n <= len(p); n += BlockSize {
		h := initial
		blocksGeneric(&h, p[:n])
		want := sha256.New()
		want.Write(p[:n])
		// Compare chaining values through a Digest finished from h.
		d := &Digest{h: h, len: uint64(n)}
		if !bytes.Equal(d.Sum(nil), want.Sum(nil)) {
			t.Fatalf("%d blocks: generic block function differs from crypto/sha256", n/BlockSize)
		}
	}
}

// TestReset checks that a reset Digest starts a new stream.
func TestReset(t *testing.T) {
	d := New()
	d.Write([]byte("some bytes that are forgotten"))
	d.Reset()
	d.Write([]byte("abc"))
	if got := hexString(d.Sum(nil)); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("after Reset: %s", got)
	}
}

func chunk(rng *rand.Rand) int {
	switch rng.IntN(3) {
	case 0:
		return rng.IntN(130)
	case 1:
		return BlockSize * rng.IntN(64)
	default:
		return rng.IntN(20000)
	}
}

// FuzzPair compares two streams hashed together, split where the fuzzer
// says, with crypto/sha256.
func FuzzPair(f *testing.F) {
	f.Add([]byte("abc"), []byte(""), uint16(1), uint16(0))
	f.Add(bytes.Repeat([]byte{1}, 200), bytes.Repeat([]byte{2}, 130), uint16(64), uint16(65))
	f.Fuzz(func(t *testing.T, pa, pb []byte, sa, sb uint16) {
		a, b := New(), New()
		ia, ib := min(int(sa), len(pa)), min(int(sb), len(pb))
		WritePair(a, pa[:ia], b, pb[:ib])
		WritePair(a, pa[ia:], b, pb[ib:])
		if !bytes.Equal(a.Sum(nil), stdSum(pa)) || !bytes.Equal(b.Sum(nil), stdSum(pb)) {
			t.Fatalf("digests differ from crypto/sha256")
		}
	})
}

func BenchmarkOne(b *testing.B) {
	p := make([]byte, 1<<20)
	d := New()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		d.Write(p)
	}
}

func BenchmarkPair(b *testing.B) {
	p, q := make([]byte, 1<<20), make([]byte, 1<<20)
	x, y := New(), New()
	b.SetBytes(int64(2 * len(p)))
	for b.Loop() {
		WritePair(x, p, y, q)
	}
}

func BenchmarkStd(b *testing.B) {
	p := make([]byte, 1<<20)
	d := sha256.New()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		d.Write(p)
	}
}
