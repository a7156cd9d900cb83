package migrate

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// proofKeys are the spellings a journal meets: content-addressed names at the
// top and in folders, with and without an extension, one digest under two
// names, and names that only look content-addressed (upper-case hex, a digit
// short, an extension too long, a trailing slash).
func proofKeys() []string {
	d := func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }
	a, b := d("a"), d("b")
	return []string{
		a + ".png", a + ".jpg", a, "inbound/" + a + ".png", "x/y/" + a + ".png", b + ".png",
		"x/./" + b + ".pdf", strings.ToUpper(a) + ".png", a[:63] + ".png", a + ".toolongext",
		a + ".png/", "photo.png", "u/t/uploads/f.png", "",
	}
}

// The compact proofs answer as a plain map of key strings would, whatever
// the spelling of the key and whether or not a copy's digest is its name's:
// after every change (a proof set, dropped, confirmed, the unconfirmed ones
// forgotten), every key's proof, the count and the full listing.
func TestProofsAgainstMap(t *testing.T) {
	keys := proofKeys()
	r := rand.New(rand.NewPCG(1, 2))
	ps, want, confirmed := newProofs(), map[string]Proof{}, map[string]bool{}
	for step := range 3000 {
		key := keys[r.IntN(len(keys))]
		switch r.IntN(10) {
		case 0:
			ps.drop(key)
			delete(want, key)
			delete(confirmed, key)
		case 1:
			ps.confirmIf(key, nil)
			if _, ok := want[key]; ok {
				confirmed[key] = true
			}
		case 2:
			even := func(p Proof) bool { return p.Size%2 == 0 }
			p, ok := want[key]
			if got := ps.confirmIf(key, even); got != (ok && even(p)) {
				t.Fatalf("step %d: confirmIf(%q) = %v, want %v", step, key, got, ok && even(p))
			}
			if ok && even(p) {
				confirmed[key] = true
			}
		case 3:
			ps.keepConfirmed()
			maps.DeleteFunc(want, func(k string, _ Proof) bool { return !confirmed[k] })
		default:
			// A proof's time: Unix seconds before 2106, as a journal written
			// by this program holds.
			p := Proof{Size: r.Int64N(1 << 40), ModTime: r.Int64(), At: r.Int64N(1 << 32)}
			if d, _, ok := splitNamed(key); ok && r.IntN(3) > 0 {
				p.SHA256 = d // the copy is what its name says
			} else {
				p.SHA256 = sha256.Sum256(fmt.Append(nil, step))
			}
			ps.set(key, p)
			want[key] = p
			delete(confirmed, key) // a new proof is the run's to confirm
		}
		for _, k := range keys {
			got, ok := ps.Get(k)
			w, wok := want[k]
			if ok != wok || got != w {
				t.Fatalf("step %d, after setting %q: Get(%q) = %+v, %v; want %+v, %v", step, key, k, got, ok, w, wok)
			}
		}
		if ps.Len() != len(want) {
			t.Fatalf("step %d: Len = %d, want %d", step, ps.Len(), len(want))
		}
		if all := maps.Collect(ps.All()); !maps.Equal(all, want) {
			t.Fatalf("step %d: All = %v, want %v", step, all, want)
		}
	}
	if len(ps.named) == 0 || len(ps.other) == 0 {
		t.Fatalf("%d named, %d other: the test did not reach both forms", len(ps.named), len(ps.other))
	}
	// A time a damaged or foreign journal may hold is clamped, not wrapped.
	for _, at := range []int64{-5, 1 << 40} {
		k := proofKeys()[0]
		d, _, _ := splitNamed(k)
		ps.set(k, Proof{At: at, SHA256: d})
		if got, _ := ps.Get(k); got.At != min(max(at, 0), 1<<32-1) {
			t.Errorf("a proof at %d reads back at %d", at, got.At)
		}
	}
}

// A JournalState built by hand, without proofs, answers that nothing is proven.
func TestNilProofs(t *testing.T) {
	var ps *Proofs
	if _, ok := ps.Get("a.png"); ok || ps.Len() != 0 {
		t.Fatal("a nil Proofs holds a proof")
	}
	for k := range ps.All() {
		t.Fatalf("a nil Proofs yields %q", k)
	}
}

// FuzzProofsKey: any key read from a journal is found again under exactly its
// own spelling, with the proof it was given.
func FuzzProofsKey(f *testing.F) {
	for _, k := range proofKeys() {
		f.Add(k, true)
		f.Add(k, false)
	}
	f.Fuzz(func(t *testing.T, key string, asNamed bool) {
		ps := newProofs()
		p := Proof{Size: 7, ModTime: 8, At: 9, SHA256: sha256.Sum256([]byte(key))}
		if d, _, ok := splitNamed(key); ok && asNamed {
			p.SHA256 = d
		}
		ps.set(key, p)
		if got, ok := ps.Get(key); !ok || got != p {
			t.Fatalf("Get(%q) = %+v, %v; want %+v", key, got, ok, p)
		}
		n := 0
		for k, got := range ps.All() {
			n++
			if k != key || got != p {
				t.Fatalf("All yields %q %+v; want %q %+v", k, got, key, p)
			}
		}
		if n != 1 || ps.Len() != 1 {
			t.Fatalf("All yields %d, Len %d; want 1", n, ps.Len())
		}
		if _, ok := ps.Get(key + "x"); ok {
			t.Fatalf("Get(%q) found the proof of %q", key+"x", key)
		}
	})
}

// BenchmarkProofsMemory: the heap 200,000 proven copies of forge's names hold
// (B/proof), compact and as a map of key strings.
func BenchmarkProofsMemory(b *testing.B) {
	const n = 200000
	keys := make([]string, n)
	proofs := make([]Proof, n)
	for i := range keys {
		sum := sha256.Sum256(fmt.Append(nil, i))
		keys[i] = fmt.Sprintf("%x.png", sum)
		proofs[i] = Proof{Size: int64(i), ModTime: int64(i), At: int64(i), SHA256: sum}
	}
	measure := func(b *testing.B, fill func() any) {
		var keep any
		var before, after runtime.MemStats
		for b.Loop() {
			keep = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			keep = fill()
			runtime.GC()
			runtime.ReadMemStats(&after)
		}
		runtime.KeepAlive(keep)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/proof")
	}
	b.Run("compact", func(b *testing.B) {
		measure(b, func() any {
			ps := newProofs()
			for i, k := range keys {
				ps.set(strings.Clone(k), proofs[i])
			}
			return ps
		})
	})
	b.Run("map", func(b *testing.B) {
		measure(b, func() any {
			m := map[string]Proof{}
			for i, k := range keys {
				m[strings.Clone(k)] = proofs[i]
			}
			return m
		})
	})
}

// TestProofsLeftAlone: keepConfirmed forgets the proofs this run did not
// confirm, and sets aside those of blobs it left alone, whatever their name.
func TestProofsLeftAlone(t *testing.T) {
	ps := newProofs()
	named := fmt.Sprintf("%x.png", sha256.Sum256([]byte("young")))
	opaque := "9df6e7510c12409b9d0a061bc2b1b79a.jpg"
	gone := fmt.Sprintf("%x.png", sha256.Sum256([]byte("moved")))
	kept := fmt.Sprintf("%x.png", sha256.Sum256([]byte("old")))
	for _, k := range []string{named, opaque, gone, kept} {
		var p Proof
		if d, _, ok := splitNamed(k); ok {
			p.SHA256 = d
		}
		ps.set(k, p)
	}
	ps.markLeftAlone(named)
	ps.markLeftAlone(opaque)
	ps.markLeftAlone("not-proven.png")
	ps.confirmIf(kept, nil)
	ps.keepConfirmed()
	for _, k := range []string{named, opaque} {
		if _, ok := ps.Get(k); ok {
			t.Errorf("%s: still proven after keepConfirmed", k)
		}
		if !ps.LeftAlone(k) {
			t.Errorf("%s: not left alone", k)
		}
	}
	for _, k := range []string{gone, kept, "not-proven.png"} {
		if ps.LeftAlone(k) {
			t.Errorf("%s: left alone", k)
		}
	}
	if _, ok := ps.Get(kept); !ok {
		t.Errorf("%s: confirmed proof forgotten", kept)
	}
	var nilProofs *Proofs
	if nilProofs.LeftAlone(named) {
		t.Error("a nil *Proofs leaves something alone")
	}
}
